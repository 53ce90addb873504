package pipeline

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// NUL marks a NULL field in textBatch rows.
const NUL = "\x00<NULL>"

// textBatch builds a CSV-style Batch; raw text is the fields joined by ','.
func textBatch(source string, fileIndex int, firstRow int64, rows [][]string) *Batch {
	b := &Batch{Source: source, FileIndex: fileIndex, FirstRow: firstRow, NumRows: len(rows)}
	if len(rows) > 0 {
		b.NumCols = len(rows[0])
	}
	line := firstRow + 2 // a header line, 1-based
	for _, r := range rows {
		for j, f := range r {
			if f == NUL {
				b.Nulls = append(b.Nulls, true)
			} else {
				b.Data = append(b.Data, f...)
				b.Nulls = append(b.Nulls, false)
			}
			b.Ends = append(b.Ends, int32(len(b.Data)))
			if j > 0 {
				b.RawData = append(b.RawData, ',')
			}
			if f != NUL {
				b.RawData = append(b.RawData, f...)
			}
		}
		b.RawEnds = append(b.RawEnds, int32(len(b.RawData)))
		b.Lines = append(b.Lines, line)
		line++
	}
	return b
}

// batchKeyValues expands cb into the KeyValue records of its cells (CellBatch.KeyValues), after checking
// what the mapping promises of every record (see checkedKeyValues).
func batchKeyValues(t testing.TB, cb *CellBatch) ([]byte, []KVRef) {
	t.Helper()
	buf, refs, err := checkedKeyValues(cb)
	if err != nil {
		t.Fatal(err)
	}
	return buf, refs
}

// checkedKeyValues is CellBatch.KeyValues after checking that every record passes Dict.Validate (which
// KeyValues checks too), that records lie back to back in Buf and that the records of one input row are
// contiguous and in input order. It returns an error rather than failing the test, for sinks, which run
// on the mapping's goroutines.
func checkedKeyValues(cb *CellBatch) ([]byte, []KVRef, error) {
	off := uint32(0)
	for i, r := range cb.Records {
		if r.Off != off || uint64(r.Off)+uint64(r.Len) > uint64(len(cb.Buf)) {
			return nil, nil, fmt.Errorf("record %d at [%d, +%d): the previous one ends at %d, the buffer at %d", i, r.Off, r.Len, off, len(cb.Buf))
		}
		if _, err := cb.Dict.Validate(cb.Record(i)); err != nil {
			return nil, nil, fmt.Errorf("record %d (seq %d): %w", i, r.Seq, err)
		}
		off = r.Off + r.Len
		if i > 0 && r.Seq < cb.Records[i-1].Seq {
			return nil, nil, fmt.Errorf("record %d: seq %d after seq %d", i, r.Seq, cb.Records[i-1].Seq)
		}
	}
	if int(off) != len(cb.Buf) {
		return nil, nil, fmt.Errorf("records end at %d, the buffer at %d", off, len(cb.Buf))
	}
	buf, refs, err := cb.KeyValues(nil, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(refs) != cb.Cells() {
		return nil, nil, fmt.Errorf("%d KeyValues from %d cells", len(refs), cb.Cells())
	}
	return buf, refs, nil
}

// cellLines renders a CellBatch's cells as hfload cell text lines, prefixed by family index and Seq.
func cellLines(t testing.TB, cb *CellBatch) []string {
	t.Helper()
	lines, err := batchLines(cb)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// batchLines is cellLines returning an error.
func batchLines(cb *CellBatch) ([]string, error) {
	buf, refs, err := checkedKeyValues(cb)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range refs {
		rec := buf[r.Off : r.Off+r.Len]
		key, val, n, err := kv.SplitKeyValue(rec)
		if err != nil || n != len(rec) {
			return nil, fmt.Errorf("bad KeyValue at %d: n=%d len=%d err=%v", r.Off, n, len(rec), err)
		}
		c := kv.CellFromKey(key, val)
		out = append(out, itoa(int(r.Family))+" "+itoa(SeqFile(r.Seq))+"/"+itoa(int(SeqRow(r.Seq)))+" "+
			kv.FormatCellLine(&c))
	}
	return out, nil
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b []byte
	for i > 0 {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

// equalLines compares cell lines as sets: the mapping emits a row's cells in HBase order (family,
// qualifier) when all qualifiers are fixed, not in the order the columns were declared.
func equalLines(t *testing.T, got, want []string) {
	t.Helper()
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	if len(got) != len(want) {
		t.Fatalf("got %d cells, want %d:\n got: %q\nwant: %q", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("cell %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
}

func mustCompile(t testing.TB, cfg *MappingConfig) *Mapping {
	t.Helper()
	m, err := Compile(cfg)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return m
}

func ptr[T any](v T) *T { return &v }
