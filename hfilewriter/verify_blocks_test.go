package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestVerifyBlocksGoldens: the cheaper check passes on every file HBase wrote (all versions, codecs,
// encodings, blooms and tags).
func TestVerifyBlocksGoldens(t *testing.T) {
	files, err := filepath.Glob("testdata/hbase-*/*.hfile")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 27 {
		t.Fatalf("found %d golden files, want at least 27", len(files))
	}
	for _, f := range files {
		r, c, err := OpenFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := r.VerifyBlocks(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		c.Close()
	}
}

// TestVerifyBlocksCatchesEveryBlockByte: like Verify, every byte flipped in the block area (all of the
// file before the trailer) is caught: checksums cover every block.
func TestVerifyBlocksCatchesEveryBlockByte(t *testing.T) {
	for _, name := range []string{corruptGolden, "testdata/hbase-2.6.4/seek-v3-none-rowbloom-256b-blocks.hfile",
		"testdata/hbase-1.0.0/v3-none-fastdiff-row-compressedtags.hfile"} {
		orig, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		blockArea := len(orig) - TrailerSizeV3
		stride := max(1, blockArea/2000)
		for i := 0; i < blockArea; i += stride {
			b := append([]byte(nil), orig...)
			b[i] ^= 0x5A
			r, err := OpenReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				continue // caught while opening
			}
			if r.VerifyBlocks() == nil {
				t.Fatalf("%s: flipping byte %d of the block area went unnoticed", name, i)
			}
		}
	}
}

// TestVerifyBlocksCatchesBadOrderAndCounts: with checksums recomputed after the edit (a writer bug
// rather than disk damage), swapped blocks and a wrong entry count are still caught.
func TestVerifyBlocksCatchesBadOrderAndCounts(t *testing.T) {
	orig, err := os.ReadFile("testdata/hbase-2.6.4/seek-v3-none-rowbloom-256b-blocks.hfile")
	if err != nil {
		t.Fatal(err)
	}
	// Set the first row byte of block 0's last cell to 0xFF so that block 0 ends after block 1's first
	// key; fix the checksums.
	b := append([]byte(nil), orig...)
	h, err := readParseBlockHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	r0, err := OpenReader(bytes.NewReader(orig), int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	blk, err := r0.readBlockAt(0, r0.blockLimit(), 0)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := decodeDataBlock(blk.Header.Type, blk.Payload, &r0.opts)
	if err != nil || len(cells) < 2 {
		t.Fatalf("block 0: %d cells, %v", len(cells), err)
	}
	lastRow := cells[len(cells)-1].Row
	row := bytes.LastIndex(b[:h.OnDiskDataSizeWithHeader], lastRow)
	if row < 0 {
		t.Fatalf("row %q not found in block 0", lastRow)
	}
	b[row] = 0xFF
	corruptRechecksum(t, b, 0)
	r, err := OpenReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.VerifyBlocks(); err == nil {
		t.Fatal("a block whose last key sorts after the next block's first key passed VerifyBlocks")
	} else {
		t.Log(err)
	}
	// A wrong entry count in the trailer (not covered by a checksum) is caught by the totals.
	b = append([]byte(nil), orig...)
	trailerOff := len(b) - TrailerSizeV3
	i := bytes.Index(b[trailerOff:], []byte{0x38})
	if i < 0 {
		t.Fatal("no entry_count field in the trailer")
	}
	b[trailerOff+i+1]++
	r, err = OpenReader(bytes.NewReader(b), int64(len(b)))
	if err == nil {
		err = r.VerifyBlocks()
	}
	if err == nil {
		t.Fatal("a wrong trailer entry count passed VerifyBlocks")
	}
}

// Duplicate keys (AllowDuplicateKeys, --duplicates keep) that straddle block boundaries make an index
// key equal to the previous block's last key (HBase's midpoint of equal keys is the right key): every
// check accepts such files, on every encoding.
func TestVerifyAcceptsDuplicatesAcrossBlocks(t *testing.T) {
	for _, enc := range []DataBlockEncoding{EncodingNone, EncodingPrefix, EncodingDiff, EncodingFastDiff} {
		opts := DefaultWriterOptions()
		opts.BlockSize = 256
		opts.Encoding = enc
		opts.AllowDuplicateKeys = true
		var buf bytes.Buffer
		sv, err := NewStreamVerifier(&buf, opts)
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewWriter(sv, opts)
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < 20; r++ {
			row := []byte{'r', byte('a' + r)}
			for d := 0; d < 12; d++ { // the same key twelve times: every block boundary inside falls between equal keys
				if err := w.AppendParts(row, []byte("f"), []byte("q"), 7, kv.TypePut, bytes.Repeat([]byte{byte(d)}, 20), nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sv.Finish(); err != nil {
			t.Fatalf("%s: stream verifier: %v", enc, err)
		}
		r, err := OpenReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if r.Trailer().DataIndexCount < 10 {
			t.Fatalf("%s: only %d data blocks; the test needs boundaries between equal keys", enc, r.Trailer().DataIndexCount)
		}
		if err := r.VerifyBlocks(); err != nil {
			t.Fatalf("%s: VerifyBlocks: %v", enc, err)
		}
		if err := r.Verify(); err != nil {
			t.Fatalf("%s: Verify: %v", enc, err)
		}
	}
}

// The fast walk of unencoded blocks agrees with the cell-by-cell walk: wherever it accepts a block, the
// walk accepts it too with the same totals and keys; damaged blocks (truncated, bad lengths, bad keys,
// long sequence ids, order across blocks) it leaves to the walk.
func TestWalkNoneBlockFastMatchesCells(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	accepted := 0
	for iter := 0; iter < 3000; iter++ {
		o := &decodeCellOptions{Tags: rng.IntN(2) == 0, Mvcc: rng.IntN(2) == 0}
		o.DecodeMvcc = o.Mvcc && rng.IntN(4) != 0
		var p []byte
		for c := 0; c < 1+rng.IntN(6); c++ {
			row := make([]byte, 1+rng.IntN(12))
			for i := range row {
				row[i] = byte('a' + rng.IntN(3))
			}
			typ := []Type{kv.TypePut, kv.TypeDelete, kv.TypeDeleteFamily, kv.TypeDeleteFamilyVersion}[rng.IntN(4)]
			key := kv.AppendKey(nil, row, []byte("f"), []byte{byte(rng.IntN(4))}, int64(rng.IntN(3)), typ)
			value := make([]byte, rng.IntN(9))
			p = binary.BigEndian.AppendUint32(p, uint32(len(key)))
			p = binary.BigEndian.AppendUint32(p, uint32(len(value)))
			p = append(append(p, key...), value...)
			if o.Tags {
				tags := make([]byte, rng.IntN(3)*4)
				p = binary.BigEndian.AppendUint16(p, uint16(len(tags)))
				p = append(p, tags...)
			}
			if o.Mvcc {
				p = AppendVLong(p, []int64{0, 5, 120, 300, -3}[rng.IntN(5)])
			}
		}
		if rng.IntN(3) == 0 { // damage
			switch rng.IntN(3) {
			case 0:
				p = p[:rng.IntN(len(p))]
			case 1:
				p[rng.IntN(len(p))] ^= byte(1 << rng.IntN(8))
			case 2:
				p = append(p, byte(rng.IntN(256)))
			}
		}
		var prev []byte
		if rng.IntN(2) == 0 {
			prev = kv.AppendKey(nil, []byte{byte('a' + rng.IntN(3))}, []byte("f"), nil, 1, kv.TypePut)
		}
		fast := &verifyState{opts: o, prevKey: prev, maxSeq: 2, maxTags: 1}
		slow := &verifyState{opts: o, prevKey: prev, maxSeq: 2, maxTags: 1}
		var fr, sr verifyBlockRef
		if !fast.walkNoneBlockFast(p, &fr) {
			if fast.cells != 0 || fr.Cells != 0 || fast.keyLenSum != 0 {
				t.Fatalf("iteration %d: the fast walk gave up but changed the state", iter)
			}
			continue
		}
		accepted++
		if err := slow.walkNoneBlockCells(p, &sr); err != nil {
			t.Fatalf("iteration %d: the fast walk accepted a block the cell walk refuses: %v", iter, err)
		}
		if fast.cells != slow.cells || fast.keyLenSum != slow.keyLenSum || fast.valSum != slow.valSum ||
			fast.maxSeq != slow.maxSeq || fast.maxTags != slow.maxTags || fast.deleteFamilyCells != slow.deleteFamilyCells ||
			fr.Cells != sr.Cells || !bytes.Equal(fr.FirstKey, sr.FirstKey) || !bytes.Equal(fr.LastKey, sr.LastKey) ||
			!bytes.Equal(fast.prevKey, slow.prevKey) {
			t.Fatalf("iteration %d: fast %+v %+v, cells %+v %+v", iter, *fast, fr, *slow, sr)
		}
	}
	if accepted < 1000 {
		t.Fatalf("the fast walk took only %d of 3000 blocks", accepted)
	}
}

// TestVerifyBlockIndex checks the binary searches that find a scanned block by its offset: every
// block's own offset finds it, and an offset before, between or after the blocks finds none.
func TestVerifyBlockIndex(t *testing.T) {
	v := newVerifyState(nil, &decodeCellOptions{}, true)
	if _, ok := v.blockIndex(0); ok {
		t.Fatal("an empty scan has a block at offset 0")
	}
	offs := []int64{0, 33, 100, 4096, 4097, 70000, 1 << 40}
	for _, off := range offs {
		v.blocks = append(v.blocks, verifyBlockRef{Offset: off})
		if off%2 == 0 {
			v.keptBlocks = append(v.keptBlocks, readBlock{Offset: off})
		}
	}
	kept := 0
	for i, off := range offs {
		if j, ok := v.blockIndex(off); !ok || j != i {
			t.Fatalf("blockIndex(%d) = %d, %v; want %d, true", off, j, ok, i)
		}
		j, ok := v.keptIndex(off)
		if want := off%2 == 0; ok != want || (ok && j != kept) {
			t.Fatalf("keptIndex(%d) = %d, %v; want %d, %v", off, j, ok, kept, want)
		}
		if ok {
			kept++
		}
	}
	for _, off := range []int64{-1, 1, 32, 34, 99, 4095, 4098, 69999, 70001, 1<<40 - 1, 1<<40 + 1} {
		if j, ok := v.blockIndex(off); ok {
			t.Fatalf("blockIndex(%d) found block %d at offset %d", off, j, v.blocks[j].Offset)
		}
		if j, ok := v.keptIndex(off); ok {
			t.Fatalf("keptIndex(%d) found kept block %d at offset %d", off, j, v.keptBlocks[j].Offset)
		}
	}
}

// TestVerifyCountsBlockTypes: the scan's count of each block type that count answers for is the
// number of scanned blocks of that type, in a file with leaf and intermediate index blocks and several
// bloom chunks of both blooms.
func TestVerifyCountsBlockTypes(t *testing.T) {
	o := DefaultWriterOptions()
	o.BlockSize, o.IndexBlockMaxSize, o.BloomBlockSize = 256, 128, 256
	var buf bytes.Buffer
	w, err := NewWriter(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	writeMixedTypes(t, w)
	r, err := OpenReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	v := newVerifyState(r, &r.opts, true)
	if err := v.scanBlocks(); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []BlockType{BlockLeafIndex, BlockIntermediateIndex, BlockMeta, BlockBloomChunk} {
		n := 0
		for _, b := range v.blocks {
			if b.Type == typ {
				n++
			}
		}
		if got := v.count(typ); got != n {
			t.Errorf("count(%s) = %d, the scan has %d", typ, got, n)
		}
		if n == 0 && typ != BlockMeta {
			t.Errorf("no %s block: the test needs some", typ)
		}
	}
	if err := r.VerifyBlocks(); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyStateResetEmpties: reset leaves a used verify state as a new one but for what it keeps for
// the next file (its map, arrays and arena emptied, its settings, the stream Reader and Trailer): every
// other field, including any added later, is zero.
func TestVerifyStateResetEmpties(t *testing.T) {
	o := DefaultWriterOptions()
	o.BlockSize = 256
	cells := make([]Cell, 0, 400)
	for i := range 400 {
		cells = append(cells, Cell{Row: fmt.Appendf(nil, "row-%06d", i), Family: []byte("f"), Timestamp: 5, Type: kv.TypePut, Value: []byte("v")})
	}
	data := streamTestWrite(t, o, cells)
	sv := fedStreamVerifier(t, o, data)
	v := sv.v
	if err := sv.finish(); err != nil { // Finish would reset v itself
		t.Fatal(err)
	}
	v.mvccWidthErr = errors.New("set")
	v.undecoded = true
	cache := v.cache
	cache[1] = nil
	if len(v.blocks) == 0 || len(v.keptBlocks) == 0 || len(v.arena) == 0 || v.cells == 0 || v.r == nil {
		t.Fatal("the verify state was not used")
	}
	opts := &decodeCellOptions{Tags: true}
	v.reset(opts)
	kept := map[string]bool{"opts": true, "cache": true, "keep": true, "keptBlocks": true, "blocks": true, "dataBlocks": true,
		"arena": true, "mvccWidth": true, "streamReader": true, "streamTrailer": true, "quick": true}
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		if !kept[f.Name] && !rv.Field(i).IsZero() {
			t.Errorf("reset leaves %s set", f.Name)
		}
	}
	if v.opts != opts || len(v.cache) != 0 || len(v.keptBlocks) != 0 || len(v.blocks) != 0 || len(v.dataBlocks) != 0 || len(v.arena) != 0 {
		t.Errorf("reset: opts %p (want %p), %d cached, %d kept, %d blocks, %d data blocks, %d arena bytes",
			v.opts, opts, len(v.cache), len(v.keptBlocks), len(v.blocks), len(v.dataBlocks), len(v.arena))
	}
	if !v.keep || !v.quick || v.streamReader == nil {
		t.Error("reset dropped the state's settings or its stream Reader")
	}
	if reflect.ValueOf(v.cache).UnsafePointer() != reflect.ValueOf(cache).UnsafePointer() {
		t.Error("reset made another map")
	}
}

// writeMixedTypes appends 3,000 rows of one cell each to w, every seventh a delete-family marker (so that
// both blooms get cells), and closes it.
func writeMixedTypes(t *testing.T, w *Writer) {
	t.Helper()
	for i := range 3000 {
		typ := kv.TypePut
		if i%7 == 0 {
			typ = kv.TypeDeleteFamily
		}
		c := &Cell{Row: fmt.Appendf(nil, "row-%06d", i), Family: []byte("f"), Timestamp: 5, Type: typ, Value: []byte("v")}
		if err := w.Append(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// fedStreamVerifier returns a stream verifier for o that has been written data, not yet finished.
func fedStreamVerifier(t *testing.T, o WriterOptions, data []byte) *StreamVerifier {
	t.Helper()
	sv, err := NewStreamVerifier(io.Discard, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sv.Write(data); err != nil {
		t.Fatal(err)
	}
	return sv
}
