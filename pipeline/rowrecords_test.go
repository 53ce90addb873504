package pipeline

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
)

// rowRecordsYAML has data-built qualifiers, a family listed twice and out of byte order, and tags.
const rowRecordsYAML = `
columns:
  - {name: id}
  - {name: host}
  - {name: v}
  - {name: n, type: int}
  - {name: ttl, type: long}
rowkey: [{column: id}]
cells:
  - {family: b, qualifier: x, value: v}
  - {family: a, qualifier: "${host}", value: v}
  - {family: ab, qualifier: q, value: n}
  - {family: a, qualifier: zz, value: v}
  - {family: b, qualifier: "y${host}", value: n}
ttl: ttl
`

// splitCells lists the cells of a batch's records, in emission order, by their own family (split back
// from row records with rd; rd nil: family records), with row, timestamp, type, value, tags and seq.
func splitCells(t *testing.T, cb *CellBatch, rd *cellrec.RowDict) []string {
	t.Helper()
	var out []string
	for i := range cb.Records {
		rec := cb.Record(i)
		if n, err := cb.Dict.Validate(rec); err != nil || n != int(cb.Records[i].Cells) {
			t.Fatalf("record %d: Validate = %d, %v; RecordRef says %d cells", i, n, err, cb.Records[i].Cells)
		}
		h, cells, _ := cellrec.ParseHeader(rec)
		kvBytes := 0
		for len(cells) > 0 {
			var q, v, tags []byte
			q, v, tags, cells = cb.Dict.NextTags(cells)
			fam := h.Family
			if rd != nil {
				var rank int
				rank, q = rd.Split(q)
				fam = rd.Family(rank)
			}
			fh := cellrec.Header{Row: h.Row, Family: fam, TS: h.TS, Type: h.Type}
			kvBytes += cb.Dict.KeyValueSize(&fh, len(q), len(v), len(tags))
			out = append(out, fmt.Sprintf("%q %s:%q %d %s = %q tags %x seq %d", h.Row, fam, q, h.TS, h.Type, v, tags, cb.Records[i].Seq))
		}
		if kvBytes != int(cb.Records[i].KVBytes) {
			t.Fatalf("record %d: KVBytes %d, its cells' KeyValues take %d", i, cb.Records[i].KVBytes, kvBytes)
		}
	}
	return out
}

// TestRowRecordsSameCells maps random batches with random plain mappings and with a general one
// (data-built qualifiers, tags, a family listed twice) into family records and into row records
// (RunOptions.Rows), through the plain and the general path: the row records are the same whatever
// the path, hold exactly the family records' cells in the same order (each back in its family), count
// the same, and a mapping whose cells ascend in (family, qualifier) order makes one record per row.
func TestRowRecordsSameCells(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	oneRecordRows, plainOne, fieldsSeen := 0, 0, 0
	batchSeen := 0 // batches whose plain row records were made by mapPlainRowRecords
	for iter := 0; iter < 300; iter++ {
		var m *Mapping
		var rows [][]string
		var header []string
		if iter%4 == 3 {
			m = compileYAML(t, rowRecordsYAML)
			header = []string{"id", "host", "v", "n", "ttl"}
			for i := 0; i < 1+rng.Intn(40); i++ {
				rows = append(rows, []string{fmt.Sprintf("r%d", rng.Intn(9)), fmt.Sprintf("h%d", rng.Intn(3)),
					fmt.Sprintf("v%d", rng.Intn(50)), fmt.Sprint(rng.Intn(99)), fmt.Sprint(rng.Intn(3) * 1000)})
			}
		} else {
			cfg, width := randomPlainConfig(rng)
			var err error
			if m, err = Compile(cfg); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 1+rng.Intn(40); i++ {
				row := make([]string, width)
				for j := range row {
					row[j] = []string{NUL, "", fmt.Sprintf("v%d", rng.Intn(100)), strings.Repeat("w", 100+rng.Intn(60))}[rng.Intn(4)]
				}
				rows = append(rows, row)
			}
		}
		fams := m.Families()
		names := make([][]byte, len(fams))
		for i, f := range fams {
			names[i] = []byte(f)
		}
		rd, err := cellrec.NewRowDict(m.Dict(), names)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := m.newRowPlan(rd)
		if err != nil {
			t.Fatal(err)
		}
		if plan.plainOne {
			plainOne++ // the plain path makes each row's record in appendPlainRecord
		}
		b := textBatch("t.csv", 1, int64(rng.Intn(1000)), rows)
		var outs [3]CellBatch // family records; row records through the plain path; through the general one
		var mps [3]*Mapper
		for k := range outs {
			mps[k] = m.NewMapper()
			mps[k].JobTimestamp = 1700000000000
			mps[k].general = k == 2
			if k > 0 {
				mps[k].rows = plan
			}
			if err := mps[k].mapBatch(b, header, &outs[k]); err != nil {
				t.Fatalf("mapping %d, output %d: %v", iter, k, err)
			}
		}
		if outs[1].Dict != rd.Dict() || !bytes.Equal(outs[1].Buf, outs[2].Buf) || !slices.Equal(outs[1].Records, outs[2].Records) {
			t.Fatalf("mapping %d: row records differ between the plain and the general path", iter)
		}
		want, got := splitCells(t, &outs[0], nil), splitCells(t, &outs[1], rd)
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Fatalf("mapping %d: cells differ\nfamily records:\n%s\nrow records:\n%s", iter, strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
		if mps[1].plainAt != nil && mps[1].plainRows == plan && mps[1].plainMax < b.NumCols {
			fieldsSeen++ // the plain row records were made by appendPlainFields
		}
		if mps[1].plainRowRecordsBatch(b, b.NumCols) {
			batchSeen++
		}
		if mps[0].counts != mps[1].counts || mps[0].rejects.n != mps[1].rejects.n {
			t.Fatalf("mapping %d: counts differ: %+v and %+v", iter, mps[0].counts, mps[1].counts)
		}
		if len(outs[1].Records) > len(outs[0].Records) {
			t.Fatalf("mapping %d: %d row records, %d family records", iter, len(outs[1].Records), len(outs[0].Records))
		}
		// Cells ascending in (family, qualifier) order: one record per row that has cells.
		if ascending(got) {
			seqs := map[uint64]bool{}
			for _, r := range outs[0].Records {
				seqs[r.Seq] = true
			}
			if len(outs[1].Records) != len(seqs) {
				t.Fatalf("mapping %d: cells ascend, but %d row records for %d rows", iter, len(outs[1].Records), len(seqs))
			}
			oneRecordRows += len(seqs)
		}
	}
	if oneRecordRows < 100 || plainOne < 20 || fieldsSeen < 20 || batchSeen < 20 {
		t.Fatalf("only %d rows had ascending cells, %d mappings one plain row record per row, %d through appendPlainFields, %d batches through mapPlainRowRecords",
			oneRecordRows, plainOne, fieldsSeen, batchSeen)
	}
}

// A row record reaches rowRecordSplit bytes before a family's cells: appendPlainRecord gives the row
// back to appendPlainCells, which cuts it there, as the general path does; the family that counts is
// the last one written (here a, before b's skipped NULL cell), and the record's family the first cell
// written (b when a's cell is NULL).
func TestPlainRowRecordsCutLongRows(t *testing.T) {
	cfg := &MappingConfig{RowKey: []PartConfig{{Column: "k"}}}
	for c, cell := range []string{"", "a:x", "b:y1", "b:y2", "c:z"} {
		cc := ColumnConfig{Name: fmt.Sprintf("c%d", c), Index: ptr(c), Type: "bytes", Cell: cell}
		if c == 0 {
			cc.Name = "k"
		}
		cfg.Columns = append(cfg.Columns, cc)
	}
	m, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := cellrec.NewRowDict(m.Dict(), [][]byte{[]byte("a"), []byte("b"), []byte("c")})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := m.newRowPlan(rd)
	if err != nil || !plan.plainOne {
		t.Fatalf("row plan: %v, plainOne %v", err, plan != nil && plan.plainOne)
	}
	big := strings.Repeat("v", rowRecordSplit)
	rows := [][]string{
		{"r1", big, NUL, "s", "t"},    // cut before b:y2 (a was the last family written)
		{"r2", "u", NUL, "s", big},    // short until c: one record
		{"r3", NUL, big, "s", "t"},    // b's cells, then cut before c; the record's family is b
		{"r4", "u", "w", "s", "t"},    // one record
		{"r5", big, big, big, "t"},    // cut before b:y1 and before c:z
		{"r6", NUL, NUL, NUL, NUL},    // no cells
		{"r7", "", big + "x", "", ""}, // empty values are cells too: cut before c
	}
	mapBoth := func(rows [][]string) []RecordRef {
		b := textBatch("t.csv", 1, 1, rows)
		var outs [2]CellBatch
		for k := range outs {
			mp := m.NewMapper()
			mp.JobTimestamp = 1700000000000
			mp.general = k == 1
			mp.rows = plan
			if err := mp.mapBatch(b, nil, &outs[k]); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(outs[0].Buf, outs[1].Buf) || !slices.Equal(outs[0].Records, outs[1].Records) {
			t.Fatalf("plain and general row records differ:\n plain   %v\n general %v", outs[0].Records, outs[1].Records)
		}
		return outs[0].Records
	}
	if n := len(mapBoth(rows)); n != 11 {
		t.Fatalf("%d records, want 11 (r1, r3, r7 cut once, r5 twice, r6 none)", n)
	}
	// Records around rowRecordSplit bytes long when b's cell comes: cut from exactly that length on.
	var edge [][]string
	for n := rowRecordSplit - 24; n <= rowRecordSplit; n++ {
		edge = append(edge, []string{fmt.Sprint("e", n), strings.Repeat("v", n), "w", NUL, NUL})
	}
	if recs := mapBoth(edge); len(recs) <= len(edge) || len(recs) == 2*len(edge) {
		t.Fatalf("%d records for %d rows around the cut: none or all cut", len(recs), len(edge))
	}
}

// ascending reports whether, within each row (seq), the cells' family:qualifier ascend.
func ascending(cells []string) bool {
	// Each line: "row" fam:"q" ts type = ... seq N. Families here are a, ab, b, cf: byte order is
	// string order, as is their qualifiers' quoted form for the test's ASCII qualifiers.
	prevSeq, prevFQ := "", ""
	for _, c := range cells {
		seq := c[strings.LastIndex(c, " seq "):]
		f := strings.Fields(c)
		fq := f[1]
		if seq == prevSeq && fq <= prevFQ {
			return false
		}
		prevSeq, prevFQ = seq, fq
	}
	return true
}
