package hfilewriter

import (
	"errors"
	"fmt"
	"io"
)

// StreamVerifier checks an HFile from its bytes as they are written, with the checks of
// Reader.VerifyBlocks, without reading the file back. Writes are passed on to the underlying writer.
// Put it between a Writer and the file:
//
//	sv, err := hfilewriter.NewStreamVerifier(f, opts)
//	w, err := hfilewriter.NewWriter(sv, opts) // the same options
//	... w.AppendParts(...) ...
//	err = w.Close()
//	err = sv.Finish() // nil: the file passes what VerifyBlocks checks
//
// The bytes are parsed by the block headers' sizes, whatever the Write boundaries (a caller may
// buffer). Each block is checked when its last byte arrives: header, checksums, decompression and,
// for data blocks, what VerifyBlocks checks (cells walked by their length fields: count, key and
// value lengths, tags, mvcc, first and last key, order after the previous block; encoded blocks:
// the encoding id). Finish parses the trailer and the load-on-open section and makes the checks
// that need them: data block offsets against the trailer, blocks tiling the file up to the trailer,
// the data index at all levels against the data blocks, the meta and bloom chunk indexes, the entry
// count and the file info totals. Write returns the first problem found in a block (and keeps
// returning it); Finish returns it, or the first problem found on Finish. Errors name the block's
// offset, as VerifyBlocks' do.
//
// The trailer and file info only come at the end of the file, but the blocks need some of what they
// say: the compression codec, the data block encoding and whether cells carry tags and sequence ids.
// NewStreamVerifier takes them from the WriterOptions, and Finish checks that the file says the same.
// Sequence ids are walked as vlongs; if MAX_MEMSTORE_TS_KEY turns out to be 0 (readers then take one
// byte per cell without decoding it), a sequence id longer than one byte is an error and the others
// count as 0, as VerifyBlocks counts them.
//
// Memory: a StreamVerifier keeps no data block bytes and no bloom chunk bytes. Per block it keeps
// what VerifyBlocks keeps (offset, on-disk and payload size, type; for an unencoded data block its
// first and last key and cell count); it keeps the decompressed payloads of the index blocks (leaf,
// intermediate and root: about one key plus 16 bytes per data block, the trailer's uncompressed
// data index size), of the file info and of the bloom metadata (one entry per bloom chunk), which
// Finish reads back. It buffers at most one block, or the trailer, at a time, only while its bytes
// span several Write calls (a block, or a v3 trailer, that arrives whole in one Write is checked in
// place), and, for a compressed file, decompresses every block into one reused buffer (buffers above
// 4 MiB, for blocks with huge cells, are dropped after use). Its work per byte is VerifyBlocks' without the reads and
// copies: one checksum pass, the decompression and the walk of the data blocks.
//
// A StreamVerifier is not safe for concurrent use.
type StreamVerifier struct {
	w      io.Writer
	codec  CompressionCodec
	layout decodeCellOptions
	v      *verifyState

	off       int64  // file offset of the first byte not yet checked (where pend starts)
	pend      []byte // bytes of the block (or trailer) that started at off, when it spans Writes
	pendSize  int    // on-disk size of the pending block once its header is parsed, else 0
	inTrailer bool   // the trailer magic was found at off: pend collects the trailer
	// trailerIn is the size of a trailer parsed in place (consume: a v3 trailer's whole 4,096 bytes in
	// one Write), whose parse's error is trailerErr; 0 while pend collects the trailer.
	trailerIn  int
	trailerErr error
	payload    []byte // decompressed payloads, reused from block to block
	// blk is the block being checked, handed to addBlock (which keeps no reference to it); its header
	// is the pending block's, parsed (when pendSize > 0), or the one unitSize just parsed.
	blk readBlock

	err  error // sticky
	done bool

	spare *verifyState // after Finish: v emptied, for NewStreamVerifierReusing
}

// streamMaxPend is the largest pending buffer kept for reuse after a block; a bigger one (a block
// with a huge cell) is released.
const streamMaxPend = 4 << 20

// NewStreamVerifier returns a StreamVerifier that passes writes on to w and checks them as the
// HFile a Writer made with opts writes. opts is normalized and validated as NewWriter does; the
// verifier uses its format version, NoTags, NoMVCC, Encoding and Compression.
func NewStreamVerifier(w io.Writer, opts WriterOptions) (*StreamVerifier, error) {
	return NewStreamVerifierReusing(w, opts, nil)
}

// NewStreamVerifierReusing is NewStreamVerifier for the next file after prev, a verifier that has
// finished and is not used again (nil: none): it returns prev itself, set up for the new file, with
// its buffers for block bytes, decompressed payloads and what Finish parses, instead of a new
// verifier growing its own. A prev that has not finished is not touched (a new verifier is made).
func NewStreamVerifierReusing(w io.Writer, opts WriterOptions, prev *StreamVerifier) (*StreamVerifier, error) {
	if w == nil {
		return nil, errors.New("hfilewriter: stream verifier: nil io.Writer")
	}
	o, err := opts.normalize()
	if err != nil {
		return nil, fmt.Errorf("hfilewriter: stream verifier: %w", err)
	}
	var s *StreamVerifier
	if prev != nil && prev.done {
		// prev itself becomes the new verifier: its struct, buffers and verify state (with the Reader
		// and Trailer Finish parses into) are reused, nothing is allocated.
		s = prev
		*s = StreamVerifier{pend: prev.pend[:0], payload: prev.payload[:0], v: prev.spare}
	} else {
		s = new(StreamVerifier)
	}
	s.w = w
	s.codec = o.Compression.Codec()
	// DecodeMvcc: sequence ids are walked as vlongs; Finish reconciles with MAX_MEMSTORE_TS_KEY.
	s.layout = decodeCellOptions{Tags: o.includesTags(), Mvcc: !o.NoMVCC, DecodeMvcc: true, Encoding: o.Encoding}
	if s.v == nil {
		s.v = newVerifyState(nil, &s.layout, true)
		s.v.keep = true
	}
	s.v.opts = &s.layout // a new state, or prev's, which its Finish reset
	s.v.mvccWidth = s.layout.Mvcc
	return s, nil
}

// errStreamFinished is returned by Write after Finish.
var errStreamFinished = errors.New("hfile stream verify: write after Finish")

// Write passes p to the underlying writer, then checks every block p completes. It returns the
// underlying writer's error if it fails (what it did write is still checked), else the first
// problem found in the stream so far. After an error it writes nothing more.
func (s *StreamVerifier) Write(p []byte) (int, error) {
	if s.done {
		return 0, errStreamFinished
	}
	if s.err != nil {
		return 0, s.err
	}
	n, werr := s.w.Write(p)
	if n < 0 || n > len(p) {
		n = 0
		if werr == nil {
			werr = fmt.Errorf("underlying writer reported an invalid count for a %d-byte write", len(p))
		}
	}
	if err := s.consume(p[:n]); err != nil {
		s.err = fmt.Errorf("hfile stream verify: %w", err)
		if werr == nil {
			return n, s.err
		}
	}
	if werr == nil && n < len(p) {
		werr = io.ErrShortWrite
	}
	if werr != nil {
		if s.err == nil {
			s.err = fmt.Errorf("hfile stream verify: the underlying writer failed at offset %d: %w", s.off+int64(len(s.pend)+s.trailerIn), werr)
		}
		return n, werr
	}
	return n, nil
}

// AvailableBuffer is the underlying writer's AvailableBuffer (see Writer), or nil if it has none or
// the stream has failed or finished: writes built in it are checked as any others.
func (s *StreamVerifier) AvailableBuffer() []byte {
	if ab, ok := s.w.(availableBufferer); ok && !s.done && s.err == nil {
		return ab.AvailableBuffer()
	}
	return nil
}

// consume checks the blocks p completes and keeps the bytes of an incomplete one.
func (s *StreamVerifier) consume(p []byte) error {
	for len(p) > 0 {
		if s.inTrailer {
			if len(s.pend)+s.trailerIn+len(p) > TrailerSizeV3 {
				return fmt.Errorf("more than %d bytes follow the trailer magic at offset %d (a trailer has at most %d)",
					TrailerSizeV3, s.off, TrailerSizeV3)
			}
			s.pend = append(s.pend, p...)
			return nil
		}
		if len(s.pend) == 0 {
			// Whole blocks straight from p, without copying them.
			size, trailer, err := s.unitSize(p, &s.blk.Header)
			if err != nil {
				return err
			}
			if trailer {
				s.inTrailer = true
				if len(p) == TrailerSizeV3 {
					// The largest trailer, whole: no byte may follow it, so it is parsed here, in
					// place, rather than copied for Finish (which returns the parse's error).
					s.trailerIn, s.trailerErr = len(p), s.readTrailer(p)
					return nil
				}
				continue
			}
			if size > 0 && size <= len(p) {
				if err := s.block(p[:size]); err != nil {
					return err
				}
				p = p[size:]
				continue
			}
			// p ends inside this block (or its header): keep it all.
			s.pend = append(s.pend, p...)
			s.pendSize = size
			return nil
		}
		if s.pendSize == 0 {
			// Enough bytes to tell a block from the trailer, then the block header; decide as soon
			// as they are there, as the fast path above does.
			want := len(TrailerMagic)
			if len(s.pend) >= want {
				want = BlockHeaderSize
			}
			take := min(want-len(s.pend), len(p))
			s.pend = append(s.pend, p[:take]...)
			p = p[take:]
			size, trailer, err := s.unitSize(s.pend, &s.blk.Header)
			if err != nil {
				return err
			}
			s.inTrailer, s.pendSize = trailer, size
			continue
		}
		take := min(s.pendSize-len(s.pend), len(p))
		s.pend = append(s.pend, p[:take]...)
		p = p[take:]
		if len(s.pend) == s.pendSize {
			if err := s.block(s.pend); err != nil {
				return err
			}
			s.pendSize = 0
			if cap(s.pend) > streamMaxPend {
				s.pend = nil
			} else {
				s.pend = s.pend[:0]
			}
		}
	}
	return nil
}

// unitSize looks at the bytes b of the file from s.off on: the trailer starts there (trailer), or a
// block of size bytes whose parsed header it puts in *h, or (size 0) b is too short to tell. It
// decides only from whole fields, so the outcome does not depend on how the bytes were split into
// writes.
func (s *StreamVerifier) unitSize(b []byte, h *readBlockHeader) (size int, trailer bool, err error) {
	if len(b) < len(TrailerMagic) {
		return 0, false, nil
	}
	if string(b[:len(TrailerMagic)]) == string(TrailerMagic) {
		return 0, true, nil
	}
	if len(b) < BlockHeaderSize {
		return 0, false, nil
	}
	if err = readParseBlockHeaderInto(h, b); err != nil {
		return 0, false, fmt.Errorf("block at offset %d: %w", s.off, err)
	}
	return h.OnDiskSize(), false, nil
}

// block checks the whole block raw found at s.off, whose header unitSize parsed into s.blk.Header
// from raw's first bytes, and moves s.off past it.
func (s *StreamVerifier) block(raw []byte) error {
	b := &s.blk
	payload, err := decodeRawPayload(raw, s.off, &b.Header, s.codec, false, false, &s.payload)
	if err != nil {
		return err
	}
	b.Offset, b.Payload = s.off, payload // addBlock keeps no reference to it
	if err := s.v.addBlock(b); err != nil {
		return err
	}
	if cap(s.payload) > streamMaxPend {
		s.payload = nil
	}
	s.off += int64(len(raw))
	return nil
}

// Finish checks what needs the end of the file: that the stream ends with a trailer after the last
// block, then the trailer, the load-on-open section, the options the blocks were checked with, the
// data index, the meta and bloom chunk indexes and the totals. Call it after Writer.Close. It
// returns nil if the file passes every check VerifyBlocks makes, else the first problem (also the
// one Write returned, if any). It releases what the verifier kept but its buffers (for
// NewStreamVerifierReusing); calling it again returns the same.
func (s *StreamVerifier) Finish() error {
	if s.done {
		return s.err
	}
	s.done = true
	if s.err == nil {
		if err := s.finish(); err != nil {
			s.err = fmt.Errorf("hfile stream verify: %w", err)
		}
	}
	s.spare, s.v = s.v, nil
	s.spare.reset(nil)
	if cap(s.pend) > streamMaxPend {
		s.pend = nil
	}
	s.pend = s.pend[:0] // pend and payload stay for NewStreamVerifierReusing
	return s.err
}

func (s *StreamVerifier) finish() error {
	if !s.inTrailer {
		switch {
		case s.pendSize > 0:
			h, _ := readParseBlockHeader(s.pend)
			return fmt.Errorf("%s block at offset %d: on-disk size %d runs past the end of the stream at offset %d (file truncated or corrupt header)",
				h.Type, s.off, s.pendSize, s.off+int64(len(s.pend)))
		case len(s.pend) > 0:
			return fmt.Errorf("block header or trailer at offset %d: the stream ends after %d of its bytes, at offset %d",
				s.off, len(s.pend), s.off+int64(len(s.pend)))
		}
		return fmt.Errorf("the stream ends at offset %d without a trailer", s.off)
	}
	trailerAt, size := s.off, s.off+int64(len(s.pend)+s.trailerIn)
	err := s.trailerErr
	if s.trailerIn == 0 {
		err = s.readTrailer(s.pend)
	}
	if err != nil {
		return err
	}
	v := s.v
	t := &v.streamTrailer
	if start := size - int64(t.Size); start != trailerAt {
		return fmt.Errorf("the v%d trailer of %d bytes starts at offset %d, but the blocks end and the trailer magic is at offset %d",
			t.MajorVersion, t.Size, start, trailerAt)
	}
	if t.Encrypted {
		return errors.New("encrypted HFiles are not supported")
	}
	// One Reader per verify state, kept from file to file (resetForStream): it reads the kept blocks.
	r := v.streamReader
	if r == nil {
		r = &Reader{readAt: streamNoReadAt, blocks: v.keptBlock, walk: &readIndexWalk{visited: map[int64]bool{}},
			fileInfoLayout: &fileInfoLayout{}}
		v.streamReader = r
	}
	r.resetForStream(size, t)
	if err := r.loadOnOpenSection(); err != nil {
		return err
	}
	if err := r.setupFromFileInfo(); err != nil {
		return err
	}
	if err := s.checkLayout(r); err != nil {
		return err
	}
	v.r = r
	for i, bi := range v.dataBlocks {
		if err := v.checkDataPlacement(i, v.blocks[bi].Offset); err != nil {
			return err
		}
	}
	if err := v.checkScanEnd(); err != nil {
		return err
	}
	if err := v.checkDataIndex(); err != nil {
		return err
	}
	if err := v.checkOtherIndexes(); err != nil {
		return err
	}
	return v.checkTotals()
}

// readTrailer parses trailerBytes, the stream's bytes from the trailer magic at s.off to its end, into
// s.v.streamTrailer.
func (s *StreamVerifier) readTrailer(trailerBytes []byte) error {
	trailerAt := s.off
	size := trailerAt + int64(len(trailerBytes))
	if cap(s.payload) < TrailerSizeV3 { // read into payload, kept for the next file
		s.payload = make([]byte, 0, TrailerSizeV3) // the larger trailer (v2: 212 bytes)
	}
	return readTrailerInto(&s.v.streamTrailer, func(p []byte, off int64) error {
		if off < trailerAt || off+int64(len(p)) > size {
			return fmt.Errorf("%d bytes at offset %d lie outside the trailer area [%d, %d) that follows the last block",
				len(p), off, trailerAt, size)
		}
		copy(p, trailerBytes[off-trailerAt:])
		return nil
	}, size, s.payload[:0], trailerBytes)
}

// streamNoReadAt is the readAt of a stream verifier's Reader, which takes every block from the ones
// the verifier kept (Reader.blocks): it is never asked for bytes.
func streamNoReadAt(p []byte, off int64) error {
	return fmt.Errorf("the stream verifier keeps no bytes to read %d bytes at offset %d", len(p), off)
}

// checkLayout checks that the file says what the blocks were checked with (NewStreamVerifier's
// options), and reconciles the sequence ids with MAX_MEMSTORE_TS_KEY.
func (s *StreamVerifier) checkLayout(r *Reader) error {
	l := &s.layout
	if r.trailer.Compression != s.codec {
		return fmt.Errorf("the trailer says compression %s, the blocks were checked as %s (the stream verifier's options)",
			r.trailer.Compression, s.codec)
	}
	if r.opts.Encoding != l.Encoding {
		return fmt.Errorf("the file info says data block encoding %s, the blocks were checked as %s (the stream verifier's options)",
			r.opts.Encoding, l.Encoding)
	}
	with := func(b bool) string {
		if b {
			return "with"
		}
		return "without"
	}
	if r.opts.Tags != l.Tags {
		return fmt.Errorf("the file info says cells are %s tags, the blocks were checked %s (the stream verifier's options)",
			with(r.opts.Tags), with(l.Tags))
	}
	if r.opts.Mvcc != l.Mvcc {
		return fmt.Errorf("the file info says cells are %s sequence ids, the blocks were checked %s (the stream verifier's options)",
			with(r.opts.Mvcc), with(l.Mvcc))
	}
	if l.Mvcc && !r.opts.DecodeMvcc {
		if s.v.mvccWidthErr != nil {
			return s.v.mvccWidthErr
		}
		s.v.maxSeq = 0 // readers take the byte without decoding it, as VerifyBlocks does
	}
	return nil
}
