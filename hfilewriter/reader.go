package hfilewriter

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/hfload/hfload/internal/kv"
)

// Reader reads an HFile v2 (minor >= 1) or v3 written by HBase or by this package's Writer: the
// trailer, the load-on-open section (data root index, meta index, file info, bloom metadata), the
// multi-level data index, every data block (all codecs and data block encodings HBase 1.x/2.x write),
// and the bloom filters. Every block read is checksum-verified. Malformed input yields errors, never
// panics. A Reader is safe for concurrent use; each Iterator is not.
type Reader struct {
	readAt      readAtFunc
	size        int64
	trailer     *Trailer
	fileInfo    []FileInfoEntry
	fileInfoIdx fileInfoIndex // where fileInfoAt finds its keys in fileInfo

	rootIndex  []readIndexEntry
	midKey     *readMidKeyInfo
	metaIndex  []readIndexEntry
	loadOnOpen []*readBlock // in file order

	generalBloom *readBloom
	deleteBloom  *readBloom
	bloomType    BloomType
	unknownBloom string // BLOOM_FILTER_TYPE this reader cannot evaluate; MayContain then answers true

	opts     decodeCellOptions
	firstKey []byte
	lastKey  []byte

	// skipChecksums disables checksum verification (fuzzing only, to reach the decoders).
	skipChecksums bool

	// blocks, when set, serves the blocks readBlockAt asks for instead of readAt: the Reader a
	// StreamVerifier builds from the blocks it saw go by (it keeps no bytes of the file to read).
	blocks func(off, limit int64, wantSize int) (*readBlock, error)

	mu         sync.Mutex
	bloomCache map[int64][]byte // chunk offset -> bit array, for MayContain

	// walk, when set, is the data index walk walkDataIndex reuses (the stream verifier's Reader, used
	// by one goroutine); nil: each walk makes its own.
	walk *readIndexWalk
	// fileInfoLayout, when set, is the last file info's layout, for the next file's (the stream
	// verifier's Reader); nil: each file info is parsed whole.
	fileInfoLayout *fileInfoLayout
	// blooms holds generalBloom and deleteBloom (their chunk arrays reused by a Reader reset for the
	// next file).
	blooms [2]readBloom
}

// resetForStream empties r for the next file of a stream verifier: every field is set as a new Reader
// has it but readAt, blocks and walk, and the arrays of the load-on-open section's parsed parts are
// kept for the next parse (nothing taken from r before stays valid).
//
// It sets the fields one by one (a new Reader assigned over r would be built and then copied); the
// mutex, unlocked between files, stays as it is.
func (r *Reader) resetForStream(size int64, t *Trailer) {
	clear(r.loadOnOpen)
	r.size, r.trailer = size, t
	r.fileInfo, r.fileInfoIdx = r.fileInfo[:0], fileInfoIndex{}
	r.rootIndex, r.midKey, r.metaIndex, r.loadOnOpen = r.rootIndex[:0], nil, r.metaIndex[:0], r.loadOnOpen[:0]
	r.generalBloom, r.deleteBloom, r.bloomType, r.unknownBloom = nil, nil, BloomType(0), ""
	r.opts, r.firstKey, r.lastKey, r.skipChecksums, r.bloomCache = decodeCellOptions{}, nil, nil, false, nil
	r.blooms[0] = readBloom{Chunks: r.blooms[0].Chunks[:0]}
	r.blooms[1] = readBloom{Chunks: r.blooms[1].Chunks[:0]}
}

// OpenReader opens the HFile of the given size read through r.
func OpenReader(r io.ReaderAt, size int64) (*Reader, error) {
	return openReader(r, size, false)
}

func openReader(r io.ReaderAt, size int64, skipChecksums bool) (*Reader, error) {
	if r == nil {
		return nil, errors.New("hfile: nil reader")
	}
	rd := &Reader{readAt: readAtFull(r, size), size: size, bloomCache: map[int64][]byte{}, skipChecksums: skipChecksums}
	t, err := readTrailer(rd.readAt, size)
	if errors.Is(err, ErrNotHFile) {
		return nil, err // "PATH: not an HFile (no trailer)", not "hfile: not an HFile"
	}
	if err != nil {
		return nil, fmt.Errorf("hfile: %w", err)
	}
	rd.trailer = t
	if err := rd.loadOnOpenSection(); err != nil {
		return nil, fmt.Errorf("hfile: %w", err)
	}
	if err := rd.setupFromFileInfo(); err != nil {
		return nil, fmt.Errorf("hfile: %w", err)
	}
	return rd, nil
}

// OpenFile opens an HFile on disk. Close the returned io.Closer when done with the Reader.
func OpenFile(path string) (*Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("hfile: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("hfile: %s: %w", path, err)
	}
	r, err := OpenReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, f, nil
}

// Trailer returns the parsed trailer.
func (r *Reader) Trailer() *Trailer { t := *r.trailer; return &t }

// EntryCount is the number of cells according to the trailer.
func (r *Reader) EntryCount() uint64 { return r.trailer.EntryCount }

// FirstKey is the flat key of the first cell (the first data index key), nil for an empty file.
func (r *Reader) FirstKey() []byte { return r.firstKey }

// LastKey is the flat key of the last cell (file info hfile.LASTKEY), nil for an empty file.
func (r *Reader) LastKey() []byte { return r.lastKey }

// BloomType is the general bloom filter type (BloomNone when the file has none).
func (r *Reader) BloomType() BloomType { return r.bloomType }

// DataBlockEncoding is the file's data block encoding.
func (r *Reader) DataBlockEncoding() DataBlockEncoding { return r.opts.Encoding }

// IncludesTags reports whether every cell record carries a tags length (v3 with hfile.MAX_TAGS_LEN).
func (r *Reader) IncludesTags() bool { return r.opts.Tags }

// IncludesMvcc reports whether every cell record carries a sequence id (KEY_VALUE_VERSION = 1).
func (r *Reader) IncludesMvcc() bool { return r.opts.Mvcc }

// blockLimit is the end of the block area (start of the trailer).
func (r *Reader) blockLimit() int64 { return r.size - int64(r.trailer.Size) }

func (r *Reader) loadOnOpenEnd() int64 { return r.blockLimit() }

// loadOnOpenSection reads the blocks from the load-on-open offset to the trailer: data root index,
// meta root index, file info, then bloom metadata blocks.
func (r *Reader) loadOnOpenSection() error {
	t := r.trailer
	end := r.blockLimit()
	off := t.LoadOnOpenOffset
	if off < 0 || off >= end {
		return fmt.Errorf("load-on-open offset %d outside the block area [0, %d)", off, end)
	}
	for off < end {
		b, err := r.readBlockAt(off, end, 0)
		if err != nil {
			return fmt.Errorf("load-on-open section: %w", err)
		}
		r.loadOnOpen = append(r.loadOnOpen, b)
		off += int64(b.Header.OnDiskSize())
		if len(r.loadOnOpen) > 64 {
			return errors.New("load-on-open section has more than 64 blocks")
		}
	}
	if len(r.loadOnOpen) < 3 {
		return fmt.Errorf("load-on-open section has %d blocks, want at least 3 (data index, meta index, file info)", len(r.loadOnOpen))
	}
	want := []BlockType{BlockRootIndex, BlockRootIndex, BlockFileInfo}
	for i, w := range want {
		if got := r.loadOnOpen[i].Header.Type; got != w {
			return fmt.Errorf("load-on-open block %d at offset %d is %s, want %s", i, r.loadOnOpen[i].Offset, got, w)
		}
	}
	if fi := r.loadOnOpen[2]; fi.Offset != t.FileInfoOffset {
		return fmt.Errorf("file info block is at offset %d but the trailer says %d", fi.Offset, t.FileInfoOffset)
	}
	var rest []byte
	var err error
	r.rootIndex, rest, err = readRootIndexInto(r.rootIndex, r.loadOnOpen[0].Payload, int(t.DataIndexCount))
	if err != nil {
		return fmt.Errorf("data root index at offset %d: %w", r.loadOnOpen[0].Offset, err)
	}
	if t.NumDataIndexLevels > 1 && len(rest) >= 16 {
		r.midKey = &readMidKeyInfo{
			LeafOffset: int64(beUint64(rest)),
			LeafSize:   int(int32(beUint32(rest[8:]))),
			EntryIndex: int(int32(beUint32(rest[12:]))),
		}
	}
	if r.metaIndex, _, err = readRootIndexInto(r.metaIndex, r.loadOnOpen[1].Payload, int(t.MetaIndexCount)); err != nil {
		return fmt.Errorf("meta index at offset %d: %w", r.loadOnOpen[1].Offset, err)
	}
	if r.fileInfo, err = readFileInfoInto(r.fileInfo, r.loadOnOpen[2].Payload, r.fileInfoLayout); err != nil {
		return fmt.Errorf("file info at offset %d: %w", r.loadOnOpen[2].Offset, err)
	}
	if l := r.fileInfoLayout; l != nil && l.payload != nil {
		r.fileInfoIdx = l.index // readFileInfoInto matched or remembered it: its keys are fileInfo's
	} else {
		r.fileInfoIdx = indexFileInfo(r.fileInfo)
	}
	for _, b := range r.loadOnOpen[3:] {
		switch b.Header.Type {
		case BlockGeneralBloomMeta:
			r.generalBloom = &r.blooms[0]
			if err = readBloomMetaInto(r.generalBloom, b); err != nil {
				return err
			}
		case BlockDeleteFamilyBloomMeta:
			r.deleteBloom = &r.blooms[1]
			if err = readBloomMetaInto(r.deleteBloom, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// setupFromFileInfo derives the cell layout, encoding, bloom type and first/last keys.
func (r *Reader) setupFromFileInfo() error {
	o := &r.opts
	if r.trailer.MajorVersion >= 3 {
		if _, ok := r.fileInfoAt(slotMaxTagsLen); ok {
			o.Tags = true
			if v, ok := r.fileInfoAt(slotTagsCompressed); ok && len(v) > 0 && v[0] != 0 {
				o.CompressTags = true
			}
		}
	}
	kvv, ok, err := r.fileInfoIntAt(slotKeyValueVersion)
	if err != nil {
		return err
	}
	o.Mvcc = ok && kvv == 1
	maxTS, _, err := r.fileInfoLongAt(slotMaxMemstoreTS)
	if err != nil {
		return err
	}
	o.DecodeMvcc = maxTS > 0
	o.Encoding = EncodingNone
	if v, ok := r.fileInfoAt(slotDataBlockEnc); ok {
		switch string(v) {
		case "NONE":
			o.Encoding = EncodingNone
		case "PREFIX":
			o.Encoding = EncodingPrefix
		case "DIFF":
			o.Encoding = EncodingDiff
		case "FAST_DIFF":
			o.Encoding = EncodingFastDiff
		case "ROW_INDEX_V1":
			o.Encoding = EncodingRowIndexV1
		default:
			return fmt.Errorf("unsupported DATA_BLOCK_ENCODING %q", v)
		}
	}
	r.bloomType = BloomNone
	if v, ok := r.fileInfoAt(slotBloomType); ok {
		switch string(v) {
		case "NONE":
		case "ROW":
			r.bloomType = BloomRow
		case "ROWCOL":
			r.bloomType = BloomRowCol
		default:
			// e.g. ROWPREFIX_FIXED_LENGTH (HBase 2.2+): readable, but its bloom is not consulted.
			r.unknownBloom = string(v)
		}
	}
	if r.generalBloom != nil && r.bloomType == BloomNone && r.unknownBloom == "" {
		return errors.New("file has a general bloom filter but no BLOOM_FILTER_TYPE in file info")
	}
	if r.bloomType == BloomNone {
		r.generalBloom = nil
	}
	if len(r.rootIndex) > 0 {
		// The first root key is the first data block's (unshortened) first key at every level.
		k := r.rootIndex[0].Key
		if Key(k).Valid() {
			r.firstKey = k
		}
	}
	if v, ok := r.fileInfoAt(slotLastKey); ok {
		if !Key(v).Valid() {
			return fmt.Errorf("file info %s is not a valid key: %s", FileInfoLastKey, kv.ToStringBinary(v))
		}
		r.lastKey = v
	}
	return nil
}
