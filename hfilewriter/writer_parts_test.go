package hfilewriter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// Tests of AppendParts. Append, AppendParts and AppendKeyValue share one write path; these tests
// check that AppendParts writes the same bytes as the other two (and as HBase), refuses what they
// refuse with the same errors, and reports the same Stats.

// partsTestAPI selects the Writer method a test appends cells with.
type partsTestAPI int

const (
	partsAPIAppend      partsTestAPI = iota // Append(*Cell)
	partsAPIParts                           // AppendParts
	partsAPIKeyValue                        // AppendKeyValue (cells without tags and sequence ids)
	partsAPISameRow                         // AppendSameRow where the cell allows it, else AppendParts
	partsAPISameRowTags                     // AppendSameRowTags where the cell allows it, else AppendParts
)

func (a partsTestAPI) String() string {
	return [...]string{"Append", "AppendParts", "AppendKeyValue", "AppendSameRow", "AppendSameRowTags"}[a]
}

// sameRowAsLast reports whether c can be appended with AppendSameRow: it shares row, family,
// timestamp and type with the last cell w took and has no tags or sequence id.
func sameRowAsLast(w *Writer, c *Cell) bool {
	return w.entries > 0 && bytes.Equal(c.Row, w.lastRow) && bytes.Equal(c.Family, w.family) &&
		c.Timestamp == w.lastTs && c.Type == w.lastType && len(c.Tags) == 0 && c.SeqID == 0
}

// sameRowCells counts the cells of a sequence that AppendSameRow would take (each sharing row,
// family, timestamp and type with the one before, neither with tags or a sequence id).
func sameRowCells(cells []Cell) int {
	n := 0
	for i := 1; i < len(cells); i++ {
		a, b := &cells[i-1], &cells[i]
		if bytes.Equal(a.Row, b.Row) && bytes.Equal(a.Family, b.Family) && a.Timestamp == b.Timestamp &&
			a.Type == b.Type && len(a.Tags) == 0 && len(b.Tags) == 0 && a.SeqID == 0 && b.SeqID == 0 {
			n++
		}
	}
	return n
}

// sameRowTestCells returns about n cells shaped like mapped input rows: ascending rows of 1 to 8
// ascending qualifiers that share a timestamp and type, values of every size (some bigger than a
// block, some repeated), and in v3 now and then a cell with tags.
func sameRowTestCells(rng *rand.Rand, n int, tags bool) []Cell {
	types := []Type{kv.TypePut, kv.TypePut, kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily, kv.TypeDeleteFamilyVersion}
	var cells []Cell
	for r := 0; len(cells) < n; r++ {
		row := []byte(fmt.Sprintf("row-%06d", r*7+rng.IntN(7)))
		ts, typ := 1700000000000+rng.Int64N(1000), types[rng.IntN(len(types))]
		q := 0
		for k := 1 + rng.IntN(8); k > 0; k-- {
			q += 1 + rng.IntN(3)
			c := Cell{Row: row, Family: []byte("cf"), Qualifier: []byte(fmt.Sprintf("q%02d", q)), Timestamp: ts, Type: typ}
			switch rng.IntN(10) {
			case 0:
			case 1:
				c.Value = bytes.Repeat([]byte{byte(rng.IntN(256))}, 1500+rng.IntN(3000))
			case 2, 3:
				c.Value = []byte("same value")
			default:
				c.Value = []byte(fmt.Sprintf("v%d", rng.IntN(1000000)))
			}
			if tags && rng.IntN(15) == 0 {
				c.Tags = kv.TTLTag(60000)
			}
			cells = append(cells, c)
		}
	}
	return cells
}

// partsTestAppend appends c through api (rec is scratch for AppendKeyValue).
func partsTestAppend(w *Writer, api partsTestAPI, c *Cell, rec *[]byte) error {
	switch api {
	case partsAPISameRowTags:
		if w.entries > 0 && bytes.Equal(c.Row, w.lastRow) && bytes.Equal(c.Family, w.family) &&
			c.Timestamp == w.lastTs && c.Type == w.lastType && c.SeqID == 0 {
			return w.AppendSameRowTags(c.Qualifier, c.Value, c.Tags)
		}
		return w.AppendParts(c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value, c.Tags)
	case partsAPISameRow:
		if sameRowAsLast(w, c) {
			return w.AppendSameRow(c.Qualifier, c.Value)
		}
		return w.AppendParts(c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value, c.Tags)
	case partsAPIParts:
		return w.AppendParts(c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value, c.Tags)
	case partsAPIKeyValue:
		*rec = kv.AppendKeyValue((*rec)[:0], c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value)
		return w.AppendKeyValue(*rec)
	}
	return w.Append(c)
}

// partsTestResult is what a file written through one API looks like from outside.
type partsTestResult struct {
	file      []byte
	stats     []WriterStats // after every 17th cell, after the last cell and after Close
	estimates []int64       // EstimatedSize at the same points (before Close)
}

// partsTestWrite writes cells (all accepted) through api and checks the Stats it records against
// values computed here from the cells.
func partsTestWrite(t *testing.T, opts WriterOptions, cells []Cell, api partsTestAPI) partsTestResult {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	var res partsTestResult
	var rec []byte
	var keyBytes, valueBytes int64
	for i := range cells {
		if err := partsTestAppend(w, api, &cells[i], &rec); err != nil {
			t.Fatalf("%s: cell %d (%s): %v", api, i, &cells[i], err)
		}
		keyBytes += int64(cells[i].KeyLen())
		valueBytes += int64(len(cells[i].Value))
		if i%17 != 0 && i != len(cells)-1 {
			continue
		}
		s := w.Stats()
		if s.Entries != int64(i+1) || !bytes.Equal(s.FirstKey, cells[0].Key()) || !bytes.Equal(s.LastKey, cells[i].Key()) ||
			s.KeyBytes != keyBytes || s.ValueBytes != valueBytes {
			t.Fatalf("%s: after cell %d: Stats %d entries, first %s, last %s, %d key bytes, %d value bytes; want %d, %s, %s, %d, %d",
				api, i, s.Entries, Key(s.FirstKey), Key(s.LastKey), s.KeyBytes, s.ValueBytes,
				i+1, Key(cells[0].Key()), Key(cells[i].Key()), keyBytes, valueBytes)
		}
		res.stats = append(res.stats, s)
		res.estimates = append(res.estimates, w.EstimatedSize())
	}
	if err := w.Close(); err != nil {
		t.Fatalf("%s: close: %v", api, err)
	}
	res.stats = append(res.stats, w.Stats())
	res.file = buf.Bytes()
	return res
}

// partsTestCompare requires got to be exactly want: bytes, Stats history and size estimates.
func partsTestCompare(t *testing.T, name string, got, want partsTestResult) {
	t.Helper()
	compareBytes(t, name, got.file, want.file)
	if !reflect.DeepEqual(got.stats, want.stats) {
		t.Fatalf("%s: Stats history differs:\n got %+v\nwant %+v", name, got.stats, want.stats)
	}
	if !reflect.DeepEqual(got.estimates, want.estimates) {
		t.Fatalf("%s: EstimatedSize history differs: got %v, want %v", name, got.estimates, want.estimates)
	}
}

// TestWriterAppendPartsGoldenHBase264 writes the HBase 2.6.4 golden files through AppendParts.
func TestWriterAppendPartsGoldenHBase264(t *testing.T) {
	for _, tc := range []struct {
		file      string
		n, width  int
		blockSize int
	}{
		{"simple-v3-none-rowbloom.hfile", 10, 2, 0},
		{"seek-v3-none-rowbloom-256b-blocks.hfile", 100, 3, 256},
	} {
		t.Run(tc.file, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "hbase-2.6.4", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got := partsTestWrite(t, golden264Options(tc.blockSize, tc.n), goldenCells(tc.n, tc.width), partsAPIParts)
			compareBytes(t, tc.file, got.file, want)
		})
	}
}

// TestWriterAppendPartsMatchesAppend writes random cells (binary rows up to 32767 bytes, empty
// qualifiers, many versions, every storable type, values bigger than a block, tags in v3) through
// Append, AppendParts and, without tags, AppendKeyValue, for every format version, codec,
// encoding and bloom type (120 combinations), with small data and index blocks so every file has
// many data blocks and a multi-level index (half of them with bulk load file info: time range, earliest
// put). The files, Stats and size estimates must be identical,
// and the AppendParts file must read back as the cells.
func TestWriterAppendPartsMatchesAppend(t *testing.T) {
	writerMatrix(func(i int, name string, o WriterOptions) {
		seed, version := uint64(i), o.FormatVersion
		o.IndexBlockMaxSize, o.BloomBlockSize = 512, 256
		if i%2 == 0 { // the file info then holds the time range and earliest put (HFileOutputFormat2)
			o.BulkLoad = &BulkLoadInfo{Time: 1700000000000, SourceTask: "test", MajorCompaction: true}
		}
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			cells := writerTestRandomCells(rng, 150, version == 3, false)
			ref := partsTestWrite(t, o, cells, partsAPIAppend)
			got := partsTestWrite(t, o, cells, partsAPIParts)
			partsTestCompare(t, "AppendParts vs Append", got, ref)
			rows := sameRowTestCells(rng, 400, version == 3)
			if n := sameRowCells(rows); n < 100 {
				t.Fatalf("only %d cells for AppendSameRow: the test should have more", n)
			}
			appended := partsTestWrite(t, o, rows, partsAPIAppend)
			partsTestCompare(t, "AppendSameRow vs Append", partsTestWrite(t, o, rows, partsAPISameRow), appended)
			partsTestCompare(t, "AppendSameRowTags vs Append", partsTestWrite(t, o, rows, partsAPISameRowTags), appended)
			hasTags := false
			for i := range cells {
				hasTags = hasTags || len(cells[i].Tags) > 0
			}
			if version == 3 && !hasTags {
				t.Fatal("no cell has tags: the v3 files should carry some")
			}
			if !hasTags {
				rec := partsTestWrite(t, o, cells, partsAPIKeyValue)
				partsTestCompare(t, "AppendParts vs kv.AppendKeyValue", got, rec)
			}
			final := got.stats[len(got.stats)-1]
			if final.DataBlocks < 10 || final.IndexLevels < 2 {
				t.Fatalf("%d data blocks, %d index levels: the test should span many blocks and index levels",
					final.DataBlocks, final.IndexLevels)
			}
			writerTestReadBack(t, got.file, cells, o)
		})
	})
}

// TestWriterAppendPartsHBase100Listings writes the cells of the HBase 1.0.0 golden files (those
// without sequence ids, which AppendParts cannot carry) with each file's settings through Append
// and AppendParts: the files must be identical. (TestScannedSectionMatchesHBase100 checks the
// Append files against HBase's.)
func TestWriterAppendPartsHBase100Listings(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "hbase-1.0.0", "*.cells.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no listings: %v", err)
	}
	tested := 0
	for _, path := range files {
		l := writerTestReadListing(t, path)
		seqs := false
		for i := range l.cells {
			seqs = seqs || l.cells[i].SeqID != 0
		}
		if seqs {
			continue
		}
		tested++
		t.Run(strings.TrimSuffix(filepath.Base(path), ".cells.txt"), func(t *testing.T) {
			opts := writerTestOptions(t, l.settings)
			if l.settings["writer"] == "HFile.getWriterFactory" {
				opts.Bloom = BloomNone
			}
			opts.IndexMinEntries = 2
			partsTestCompare(t, "AppendParts vs Append", partsTestWrite(t, opts, l.cells, partsAPIParts),
				partsTestWrite(t, opts, l.cells, partsAPIAppend))
		})
	}
	if tested < 10 {
		t.Fatalf("only %d listings without sequence ids", tested)
	}
}

// TestWriterAppendPartsRefusals appends two cells, then one the writer must refuse, then two more,
// through each API. The refusal must carry the error Append and AppendKeyValue have always given
// (the messages below are theirs), and leave the writer usable: the file must be the one written
// without the refused cell.
func TestWriterAppendPartsRefusals(t *testing.T) {
	cell := func(row, fam, qual string, ts int64, typ Type) Cell {
		return Cell{Row: []byte(row), Family: []byte(fam), Qualifier: []byte(qual), Timestamp: ts, Type: typ, Value: []byte("v")}
	}
	before := []Cell{cell("row-03", "cf", "q", 100, kv.TypePut), cell("row-04", "cf", "b", 100, kv.TypePut)}
	after := []Cell{cell("row-04", "cf", "c", 100, kv.TypePut), cell("row-05", "cf", "a", 100, kv.TypePut)}
	longRow := cell(strings.Repeat("r", kv.MaxRowLength+1), "cf", "q", 1, kv.TypePut)
	longFamily := cell("row-05", strings.Repeat("f", kv.MaxFamilyLength+1), "q", 1, kv.TypePut)
	longTags := cell("row-05", "cf", "q", 1, kv.TypePut)
	longTags.Tags = append([]byte{0xff, 0xff}, make([]byte, kv.MaxTagsLength-1)...)
	badTags := cell("row-05", "cf", "q", 1, kv.TypePut)
	badTags.Tags = []byte{0, 5, 1}

	const prefix = "hfilewriter: "
	cases := []struct {
		name   string
		c      Cell
		want   string // the error, from Append and AppendParts
		wantKV string // from AppendKeyValue if it differs ("-": not expressible as a KeyValue)
	}{
		{"qualifier before the previous one", cell("row-04", "cf", "a", 100, kv.TypePut),
			"key out of order: row-04/cf:a/100/Put sorts before the previous key row-04/cf:b/100/Put", ""},
		{"newer version of the previous column", cell("row-04", "cf", "b", 200, kv.TypePut),
			"key out of order: row-04/cf:b/200/Put sorts before the previous key row-04/cf:b/100/Put", ""},
		{"latest timestamp", cell("row-04", "cf", "b", kv.LatestTimestamp, kv.TypePut),
			"key out of order: row-04/cf:b/LATEST_TIMESTAMP/Put sorts before the previous key row-04/cf:b/100/Put", ""},
		{"type sorting before Put", cell("row-04", "cf", "b", 100, kv.TypeDeleteColumn),
			"key out of order: row-04/cf:b/100/DeleteColumn sorts before the previous key row-04/cf:b/100/Put", ""},
		{"row before the previous one", cell("row-03", "cf", "z", 100, kv.TypePut),
			"key out of order: row-03/cf:z/100/Put sorts before the previous key row-04/cf:b/100/Put", ""},
		{"row a prefix of the previous one", cell("row-0", "cf", "z", 100, kv.TypePut),
			"key out of order: row-0/cf:z/100/Put sorts before the previous key row-04/cf:b/100/Put", ""},
		{"duplicate", cell("row-04", "cf", "b", 100, kv.TypePut),
			"duplicate key: row-04/cf:b/100/Put equals the previous key row-04/cf:b/100/Put", ""},
		{"family sorting after, same row", cell("row-04", "cg", "a", 100, kv.TypePut),
			`key row-04/cg:a/100/Put has family "cg" but the file holds family "cf" (one family per HFile)`, ""},
		{"family sorting before, same row", cell("row-04", "ce", "z", 100, kv.TypePut),
			"key out of order: row-04/ce:z/100/Put sorts before the previous key row-04/cf:b/100/Put", ""},
		{"family a prefix, same row", cell("row-04", "c", "z", 100, kv.TypePut),
			"key out of order: row-04/c:z/100/Put sorts before the previous key row-04/cf:b/100/Put", ""},
		{"other family, new row", cell("row-05", "zz", "q", 100, kv.TypePut),
			`key row-05/zz:q/100/Put has family "zz" but the file holds family "cf" (one family per HFile)`, ""},
		{"type Minimum", cell("row-05", "cf", "q", 100, kv.TypeMinimum),
			"key row-05/cf:q/100/Minimum has type Minimum, which cannot be stored", ""},
		{"type Maximum", cell("row-05", "cf", "q", 100, kv.TypeMaximum),
			"key row-05/cf:q/100/Maximum has type Maximum, which cannot be stored", ""},
		{"unknown type", cell("row-05", "cf", "q", 100, Type(5)),
			"key row-05/cf:q/100/Type(5) has type Type(5), which cannot be stored", ""},
		{"malformed tags", badTags,
			"cell row-05/cf:q/1/Put/vlen=1/seqid=0: malformed tags: tag at offset 0 claims 5 bytes, 1 left", "-"},
		{"tags too long", longTags,
			"cell row-05/cf:q/1/Put/vlen=1/seqid=0: tags of 65536 bytes exceed HBase's limit of 65535", "-"},
		{"row too long", longRow,
			"cell " + kv.ToStringBinary(longRow.Row) + "/cf:q/1/Put/vlen=1/seqid=0: row of 32768 bytes exceeds HBase's limit of 32767",
			"malformed key " + kv.ToStringBinary(longRow.Key())},
		{"family too long", longFamily,
			"cell row-05/" + kv.ToStringBinary(longFamily.Family) + ":q/1/Put/vlen=1/seqid=0: family of 128 bytes exceeds HBase's limit of 127",
			"key row-05/" + kv.ToStringBinary(longFamily.Family) + ":q/1/Put: family of 128 bytes exceeds HBase's limit of 127"},
	}
	opts := DefaultWriterOptions()
	reference := partsTestWrite(t, opts, append(append([]Cell(nil), before...), after...), partsAPIAppend).file
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, api := range []partsTestAPI{partsAPIAppend, partsAPIParts, partsAPIKeyValue, partsAPISameRow} {
				want := tc.want
				if api == partsAPIKeyValue && tc.wantKV != "" {
					if want = tc.wantKV; want == "-" {
						continue
					}
				}
				var buf bytes.Buffer
				w, err := NewWriter(&buf, opts)
				if err != nil {
					t.Fatal(err)
				}
				var rec []byte
				for i := range before {
					if err := partsTestAppend(w, api, &before[i], &rec); err != nil {
						t.Fatal(err)
					}
				}
				bad := tc.c
				err = partsTestAppend(w, api, &bad, &rec)
				if err == nil || err.Error() != prefix+want {
					t.Fatalf("%s: error %v, want %q", api, err, prefix+want)
				}
				if s := w.Stats(); s.Entries != 2 || !bytes.Equal(s.LastKey, before[1].Key()) {
					t.Fatalf("%s: after the refusal Stats has %d entries, last key %s", api, s.Entries, Key(s.LastKey))
				}
				for i := range after {
					if err := partsTestAppend(w, api, &after[i], &rec); err != nil {
						t.Fatalf("%s: writer unusable after the refusal: %v", api, err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				compareBytes(t, api.String()+" after a refused cell", buf.Bytes(), reference)
			}
		})
	}
}

// TestWriterAppendPartsTagsSettings: tags are refused (and the writer stays usable) in v2 files and
// v3 files written with NoTags, as Append refuses them; empty tags are no tags.
func TestWriterAppendPartsTagsSettings(t *testing.T) {
	row := Cell{Row: []byte("a"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1, Type: kv.TypePut, Value: []byte("v")}
	tagged := row
	tagged.Tags = kv.TTLTag(5)
	next := row
	next.Row = []byte("b")
	for _, mod := range []func(*WriterOptions){
		func(o *WriterOptions) { o.FormatVersion = 2 },
		func(o *WriterOptions) { o.NoTags = true },
	} {
		o := DefaultWriterOptions()
		mod(&o)
		reference := partsTestWrite(t, o, []Cell{row, next}, partsAPIAppend).file
		for _, api := range []partsTestAPI{partsAPIAppend, partsAPIParts} {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := partsTestAppend(w, api, &row, nil); err != nil {
				t.Fatal(err)
			}
			err = partsTestAppend(w, api, &tagged, nil)
			want := "hfilewriter: cell a/f:q/1/Put/vlen=1/seqid=0 has tags but the file is written without tags (tags need HFile v3 without NoTags)"
			if err == nil || err.Error() != want {
				t.Fatalf("v%d NoTags=%v %s: error %v, want %q", o.FormatVersion, o.NoTags, api, err, want)
			}
			if err := w.AppendParts(next.Row, next.Family, next.Qualifier, next.Timestamp, next.Type, next.Value, []byte{}); err != nil {
				t.Fatalf("%s: empty tags refused: %v", api, err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			compareBytes(t, fmt.Sprintf("v%d NoTags=%v %s", o.FormatVersion, o.NoTags, api), buf.Bytes(), reference)
		}
	}
}

// TestWriterAppendPartsAllowDuplicateKeys: with AllowDuplicateKeys the duplicate is written, as
// through Append.
func TestWriterAppendPartsAllowDuplicateKeys(t *testing.T) {
	o := DefaultWriterOptions()
	o.AllowDuplicateKeys = true
	c := Cell{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1, Type: kv.TypePut, Value: []byte("a")}
	d := c
	d.Value = []byte("b")
	cells := []Cell{c, d, d}
	got := partsTestWrite(t, o, cells, partsAPIParts)
	partsTestCompare(t, "AppendParts vs Append", got, partsTestWrite(t, o, cells, partsAPIAppend))
	if got.stats[len(got.stats)-1].Entries != 3 {
		t.Fatalf("%d entries, want 3", got.stats[len(got.stats)-1].Entries)
	}
}

// TestWriterAppendPartsWriteErrorIsSticky: an io.Writer error fails the writer at the same cell and
// with the same error whichever API appends, and every later call returns that error.
func TestWriterAppendPartsWriteErrorIsSticky(t *testing.T) {
	o := DefaultWriterOptions()
	o.BlockSize = 256
	cells := goldenCells(200, 3)
	type outcome struct {
		failedAt      int
		err, next, cl string
	}
	var results []outcome
	for _, api := range []partsTestAPI{partsAPIAppend, partsAPIParts, partsAPIKeyValue} {
		w, err := NewWriter(&writerTestFailingWriter{limit: 1000}, o)
		if err != nil {
			t.Fatal(err)
		}
		var rec []byte
		r := outcome{failedAt: -1}
		for i := range cells {
			if err := partsTestAppend(w, api, &cells[i], &rec); err != nil {
				r.failedAt, r.err = i, err.Error()
				break
			}
		}
		if r.failedAt < 0 || !strings.Contains(r.err, "disk full") {
			t.Fatalf("%s: failed at %d with %q, want the write error", api, r.failedAt, r.err)
		}
		err = partsTestAppend(w, api, &cells[len(cells)-1], &rec)
		if err == nil {
			t.Fatalf("%s: append after a write error succeeded", api)
		}
		r.next = err.Error()
		if err := w.AppendParts([]byte("zzz"), []byte("cf"), nil, 1, kv.TypePut, nil, nil); err == nil || err.Error() != r.err {
			t.Fatalf("%s: AppendParts on the failed writer: %v, want %q", api, err, r.err)
		}
		if err = w.Close(); err == nil {
			t.Fatalf("%s: close succeeded", api)
		}
		r.cl = err.Error()
		if err := w.AppendParts([]byte("zzz"), []byte("cf"), nil, 1, kv.TypePut, nil, nil); !errors.Is(err, ErrWriterClosed) {
			t.Fatalf("%s: AppendParts after Close: %v", api, err)
		}
		results = append(results, r)
	}
	for i := 1; i < len(results); i++ {
		if results[i] != results[0] {
			t.Fatalf("%s: %+v; Append: %+v", partsTestAPI(i), results[i], results[0])
		}
	}
}

// FuzzWriterAppendParts feeds the same cells, some out of order, duplicated, of another family, of
// unstorable types or with malformed tags, to Append, AppendParts and (without tags)
// AppendKeyValue. The three must accept and refuse the same cells with the same errors, and write
// identical files with identical Stats.
func FuzzWriterAppendParts(f *testing.F) {
	f.Add([]byte("\x02ab\x01q\x00v\x02ab\x01r\x10w\x02ab\x01r\x00w\x01a\x01q\x00x"), uint8(0))
	f.Add([]byte("\x03row\x00\x05x\x03row\x00\x0fy\x03row\x02\x00z\x03rox\x01q\x07"), uint8(5))
	f.Add(bytes.Repeat([]byte("\x02rr\x01q\x21abc\x02rs\x00\x30"), 20), uint8(14))
	f.Add([]byte("\x01a\x02qq\x38t\x01a\x02qq\x39u\x01b\x01q\x3a\x01b\x01q\x3b"), uint8(22))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		o := DefaultWriterOptions()
		o.BlockSize = 64
		o.Encoding = []DataBlockEncoding{EncodingNone, EncodingPrefix, EncodingDiff, EncodingFastDiff}[mode%4]
		o.Bloom = []BloomType{BloomRow, BloomRowCol, BloomNone}[mode/4%3]
		o.AllowDuplicateKeys = mode&0x10 != 0
		if mode&0x20 != 0 {
			o.FormatVersion = 2
		}
		withTags := mode&0x40 != 0
		// Cell: row length byte (%5), row, qualifier length byte (%3), qualifier, selector byte
		// (type, timestamp, family, value length, tags).
		var cells []Cell
		for len(data) > 0 && len(cells) < 200 {
			n := int(data[0]) % 5
			if len(data) < 1+n+1 {
				break
			}
			row := data[1 : 1+n]
			data = data[1+n:]
			qn := int(data[0]) % 3
			if len(data) < 1+qn+1 {
				break
			}
			q := data[1 : 1+qn]
			sel := data[1+qn]
			data = data[2+qn:]
			types := []Type{kv.TypePut, kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily, kv.TypeDeleteFamilyVersion, kv.TypeMinimum, kv.TypeMaximum}
			c := Cell{Row: row, Family: []byte("f"), Qualifier: q, Timestamp: int64(sel>>3) % 3, Type: types[sel%8]}
			if sel%29 == 28 {
				c.Family = []byte("g")
			}
			c.Value = data[:min(len(data), int(sel>>5))]
			data = data[len(c.Value):]
			if withTags {
				switch sel % 7 {
				case 1:
					c.Tags = kv.TTLTag(int64(sel))
				case 2:
					c.Tags = []byte{0, 9, 1} // malformed
				}
			}
			cells = append(cells, c)
		}
		apis := []partsTestAPI{partsAPIAppend, partsAPIParts}
		if !withTags {
			apis = append(apis, partsAPIKeyValue)
		}
		var files [][]byte
		var stats []WriterStats
		var errs [][]string
		for _, api := range apis {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, o)
			if err != nil {
				t.Fatal(err)
			}
			var rec []byte
			var es []string
			for i := range cells {
				if err := partsTestAppend(w, api, &cells[i], &rec); err != nil {
					es = append(es, fmt.Sprintf("%d: %v", i, err))
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			files, stats, errs = append(files, buf.Bytes()), append(stats, w.Stats()), append(errs, es)
		}
		for i := 1; i < len(apis); i++ {
			if !reflect.DeepEqual(errs[i], errs[0]) {
				t.Fatalf("%s refused %q, Append refused %q", apis[i], errs[i], errs[0])
			}
			compareBytes(t, apis[i].String()+" vs Append", files[i], files[0])
			if !reflect.DeepEqual(stats[i], stats[0]) {
				t.Fatalf("%s Stats %+v, Append Stats %+v", apis[i], stats[i], stats[0])
			}
		}
		if len(cells) > 0 && len(errs[0]) < len(cells) {
			r, err := OpenReader(bytes.NewReader(files[0]), int64(len(files[0])))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Verify(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestWriterAppendPartsDoesNotAllocate: in the steady state AppendParts allocates nothing, with or
// without tags and data block encoding (block, index and bloom buffers are reused or grow
// geometrically, so they amortize to less than one allocation per cell).
func TestWriterAppendPartsDoesNotAllocate(t *testing.T) {
	for _, enc := range []DataBlockEncoding{EncodingNone, EncodingFastDiff} {
		for _, tags := range [][]byte{nil, kv.TTLTag(60000)} {
			o := DefaultWriterOptions()
			o.Encoding = enc
			w, err := NewWriter(io.Discard, o)
			if err != nil {
				t.Fatal(err)
			}
			row, family, value := []byte("row-0000000000"), []byte("f"), []byte("value")
			quals := [][]byte{[]byte("a"), []byte("bb"), []byte("ccc")}
			i := 0
			appendRow := func() {
				benchWriterIncrement(row)
				for _, q := range quals {
					if err := w.AppendParts(row, family, q, int64(i), kv.TypePut, value, tags); err != nil {
						t.Fatal(err)
					}
				}
				i++
			}
			for k := 0; k < 1000; k++ { // warm up: first blocks, index and bloom chunk allocated
				appendRow()
			}
			if n := testing.AllocsPerRun(20000, appendRow); n != 0 {
				t.Errorf("%s, %d bytes of tags: %v allocations per row of 3 cells", enc, len(tags), n)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
