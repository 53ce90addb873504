package pipeline

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// recordLines renders every record of cb, after the checks of checkedKeyValues (Dict.Validate among
// them), as "family-index file/row row family@ts cells", a cell as q=v with a dictionary qualifier in
// brackets.
func recordLines(t *testing.T, cb *CellBatch) []string {
	t.Helper()
	if _, _, err := checkedKeyValues(cb); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, r := range cb.Records {
		h, cells, err := cellrec.ParseHeader(cb.Record(i))
		if err != nil || h.Type != kv.TypePut {
			t.Fatalf("record %d: type %v, %v", i, h.Type, err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d %d/%d %s %s@%d", r.Family, SeqFile(r.Seq), SeqRow(r.Seq), kv.ToStringBinary(h.Row), h.Family, h.TS)
		for len(cells) > 0 {
			dict := cells[0]&1 == 1 // the low bit of the uvarint: 2i+1 is a dictionary index
			var q, v, tags []byte
			q, v, tags, cells = cb.Dict.NextTags(cells)
			if dict {
				fmt.Fprintf(&b, " [%s]=%s", q, kv.ToStringBinary(v))
			} else {
				fmt.Fprintf(&b, " %s=%s", q, kv.ToStringBinary(v))
			}
			if cb.Dict.Tagged() {
				fmt.Fprintf(&b, " tags=%s", kv.ToStringBinary(tags))
			}
		}
		out = append(out, b.String())
	}
	return out
}

// sameLines compares lines in order.
func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func dictQualifiers(d *cellrec.Dict) []string {
	var out []string
	for i := 0; i < d.Len(); i++ {
		out = append(out, string(d.At(i)))
	}
	return out
}

// TestRecordsPerFamily: with fixed qualifiers a row gives one record per family, its cells in HBase order
// whatever the declaration order, NULLs skipped; the records expand to exactly the KeyValues of the
// cells, in the order the mapping emitted them, and each RecordRef's Cells and KVBytes match.
func TestRecordsPerFamily(t *testing.T) {
	m := compileYAML(t, `
columns:
  - {name: id}
  - {name: z, cell: "m:z"}
  - {name: b, cell: "d:b"}
  - {name: a, cell: "d:a"}
  - {name: y, type: long, cell: "m:y"}
rowkey: [id]
timestamp: {value: 7}
`)
	if got := dictQualifiers(m.Dict()); !slices.Equal(got, []string{"a", "b", "y", "z"}) {
		t.Fatalf("Dict() = %q", got)
	}
	rows := [][]string{
		{"r1", "Z", "B", "A", "5"},
		{"r2", NUL, "B2", NUL, "6"}, // one cell of each family
		{"r3", "Z3", NUL, NUL, "7"}, // no cell of family d: no record
		{"r4", NUL, NUL, NUL, NUL},  // no cells at all: keyed, no record
	}
	var cb CellBatch
	mp := m.NewMapper()
	if err := mp.MapBatch(textBatch("f.csv", 2, 10, rows), []string{"id", "z", "b", "a", "y"}, &cb, nil); err != nil {
		t.Fatal(err)
	}
	if cb.Dict != m.Dict() {
		t.Fatal("the batch's Dict is not the mapping's")
	}
	// Families by first appearance: m = 0, d = 1.
	sameLines(t, "records", recordLines(t, &cb), []string{
		`1 2/10 r1 d@7 [a]=A [b]=B`,
		`0 2/10 r1 m@7 [y]=\x00\x00\x00\x00\x00\x00\x00\x05 [z]=Z`,
		`1 2/11 r2 d@7 [b]=B2`,
		`0 2/11 r2 m@7 [y]=\x00\x00\x00\x00\x00\x00\x00\x06`,
		`0 2/12 r3 m@7 [y]=\x00\x00\x00\x00\x00\x00\x00\x07 [z]=Z3`,
	})
	if c := mp.Counts(); c.RowsKeyed != 4 || c.CellsEmitted != 8 || c.NullsSkipped != 8 || cb.Cells() != 8 {
		t.Fatalf("counts %+v, %d cells in the batch", c, cb.Cells())
	}

	// The KeyValues, byte for byte, in emission order, and per record their number and size.
	long := func(v byte) string { return "\x00\x00\x00\x00\x00\x00\x00" + string(v) }
	type kvb struct{ row, fam, q, v string }
	want := [][]kvb{
		{{"r1", "d", "a", "A"}, {"r1", "d", "b", "B"}},
		{{"r1", "m", "y", long(5)}, {"r1", "m", "z", "Z"}},
		{{"r2", "d", "b", "B2"}},
		{{"r2", "m", "y", long(6)}},
		{{"r3", "m", "y", long(7)}, {"r3", "m", "z", "Z3"}},
	}
	var wantBuf []byte
	for i, rec := range want {
		start := len(wantBuf)
		for _, c := range rec {
			wantBuf = kv.AppendKeyValue(wantBuf, []byte(c.row), []byte(c.fam), []byte(c.q), 7, kv.TypePut, []byte(c.v))
		}
		if r := cb.Records[i]; int(r.Cells) != len(rec) || int(r.KVBytes) != len(wantBuf)-start {
			t.Errorf("record %d: %d cells of %d KeyValue bytes, want %d of %d", i, r.Cells, r.KVBytes, len(rec), len(wantBuf)-start)
		}
	}
	buf, refs := batchKeyValues(t, &cb)
	if !bytes.Equal(buf, wantBuf) {
		t.Fatalf("KeyValues\n got %q\nwant %q", buf, wantBuf)
	}
	var fams []uint16
	for _, r := range refs {
		fams = append(fams, r.Family)
	}
	if !slices.Equal(fams, []uint16{1, 1, 0, 0, 1, 0, 0, 0}) || refs[7].Seq != SeqOf(2, 12) || refs[2].Off != refs[1].Off+refs[1].Len {
		t.Fatalf("refs %+v", refs)
	}
}

// TestRecordsDataQualifiers: qualifiers built from data are literal; a cell whose qualifier does not sort
// strictly after the previous cell's of the same family (compared across literal and dictionary
// qualifiers) starts a new record, and so does a change of family.
func TestRecordsDataQualifiers(t *testing.T) {
	m := compileYAML(t, `
columns: [{name: id}, {name: x}, {name: v}, {name: w, cell: "d:m"}]
rowkey: [id]
cells:
  - {family: d, qualifier: "${x}", value: v}
  - {family: d, qualifier: "${x}|2", value: v}
  - {family: d, qualifier: "k", value: v}
  - {family: e, qualifier: "${x}", value: v}
timestamp: {value: 1}
`)
	if got := dictQualifiers(m.Dict()); !slices.Equal(got, []string{"k", "m"}) {
		t.Fatalf("Dict() = %q, want the fixed qualifiers only", got)
	}
	rows := [][]string{
		{"ra", "a", "1", "W"}, // a < m: new record; a|2 and k follow in order
		{"rz", "z", "2", "W"}, // z and z|2 follow m; k does not follow z|2
		{"rm", "m", "3", "W"}, // m does not follow m (equal): new record
		{"rb", "b", "4", NUL}, // no d:m
	}
	var cb CellBatch
	mp := m.NewMapper()
	if err := mp.MapBatch(textBatch("q.csv", 0, 0, rows), []string{"id", "x", "v", "w"}, &cb, nil); err != nil {
		t.Fatal(err)
	}
	sameLines(t, "records", recordLines(t, &cb), []string{
		"0 0/0 ra d@1 [m]=W", "0 0/0 ra d@1 a=1 a|2=1 [k]=1", "1 0/0 ra e@1 a=1",
		"0 0/1 rz d@1 [m]=W z=2 z|2=2", "0 0/1 rz d@1 [k]=2", "1 0/1 rz e@1 z=2",
		"0 0/2 rm d@1 [m]=W", "0 0/2 rm d@1 m=3 m|2=3", "0 0/2 rm d@1 [k]=3", "1 0/2 rm e@1 m=3",
		"0 0/3 rb d@1 b=4 b|2=4 [k]=4", "1 0/3 rb e@1 b=4",
	})
	// The KeyValues are the cells in the order the mapping declares them, as before records.
	sameLines(t, "KeyValues", cellLines(t, &cb), []string{
		"0 0/0 ra\td:m\t1\tPut\tW", "0 0/0 ra\td:a\t1\tPut\t1", "0 0/0 ra\td:a|2\t1\tPut\t1", "0 0/0 ra\td:k\t1\tPut\t1", "1 0/0 ra\te:a\t1\tPut\t1",
		"0 0/1 rz\td:m\t1\tPut\tW", "0 0/1 rz\td:z\t1\tPut\t2", "0 0/1 rz\td:z|2\t1\tPut\t2", "0 0/1 rz\td:k\t1\tPut\t2", "1 0/1 rz\te:z\t1\tPut\t2",
		"0 0/2 rm\td:m\t1\tPut\tW", "0 0/2 rm\td:m\t1\tPut\t3", "0 0/2 rm\td:m|2\t1\tPut\t3", "0 0/2 rm\td:k\t1\tPut\t3", "1 0/2 rm\te:m\t1\tPut\t3",
		"0 0/3 rb\td:b\t1\tPut\t4", "0 0/3 rb\td:b|2\t1\tPut\t4", "0 0/3 rb\td:k\t1\tPut\t4", "1 0/3 rb\te:b\t1\tPut\t4",
	})
	if c := mp.Counts(); c.CellsEmitted != 19 || c.NullsSkipped != 1 {
		t.Fatalf("counts %+v", c)
	}
}

// TestRecordsSameQualifier: two columns mapped to one qualifier (ImportTsv) give two cells, which cannot
// share a record.
func TestRecordsSameQualifier(t *testing.T) {
	cfg, err := ParseColumns("HBASE_ROW_KEY,d:a,d:a,d:b")
	if err != nil {
		t.Fatal(err)
	}
	m := mustCompile(t, cfg)
	mp := m.NewMapper()
	mp.JobTimestamp = 3
	var cb CellBatch
	if err := mp.MapBatch(textBatch("s.tsv", 0, 0, [][]string{{"k", "1", "2", "3"}, {"j", NUL, "2", "3"}}), nil, &cb, nil); err != nil {
		t.Fatal(err)
	}
	sameLines(t, "records", recordLines(t, &cb), []string{
		"0 0/0 k d@3 [a]=1", "0 0/0 k d@3 [a]=2 [b]=3",
		"0 0/1 j d@3 [a]=2 [b]=3",
	})
	sameLines(t, "KeyValues", cellLines(t, &cb), []string{
		"0 0/0 k\td:a\t3\tPut\t1", "0 0/0 k\td:a\t3\tPut\t2", "0 0/0 k\td:b\t3\tPut\t3",
		"0 0/1 j\td:a\t3\tPut\t2", "0 0/1 j\td:b\t3\tPut\t3",
	})
}

// TestRecordsTags: cell tags travel at the end of each value in the record (value | tags | uint16
// length), are counted in KVBytes and reach the KeyValues unchanged.
func TestRecordsTags(t *testing.T) {
	cfg, err := ParseColumns("HBASE_ROW_KEY,d:a,HBASE_CELL_TTL,d:b")
	if err != nil {
		t.Fatal(err)
	}
	m := mustCompile(t, cfg)
	mp := m.NewMapper()
	mp.JobTimestamp = 9
	var cb CellBatch
	if err := mp.MapBatch(textBatch("t.csv", 0, 0, [][]string{{"r1", "x", "1000", "y"}, {"r2", "x", "0", NUL}}), nil, &cb, nil); err != nil {
		t.Fatal(err)
	}
	ttl := kv.TTLTag(1000)
	tagged := func(v string, tags []byte) string { return v + " tags=" + kv.ToStringBinary(tags) }
	sameLines(t, "records", recordLines(t, &cb), []string{
		"0 0/0 r1 d@9 [a]=" + tagged("x", ttl) + " [b]=" + tagged("y", ttl),
		"0 0/1 r2 d@9 [a]=" + tagged("x", nil),
	})
	buf, refs := batchKeyValues(t, &cb)
	for i, want := range []struct {
		value string
		tags  []byte
	}{{"x", ttl}, {"y", ttl}, {"x", nil}} {
		value, tags, err := splitTaggedKeyValue(buf[refs[i].Off : refs[i].Off+refs[i].Len])
		if err != nil || string(value) != want.value || !bytes.Equal(tags, want.tags) {
			t.Fatalf("cell %d: value %q tags %x (%v), want %q %x", i, value, tags, err, want.value, want.tags)
		}
	}
	// KVBytes: 8 + 12-byte key infrastructure + row 2 + family 1 + qualifier 1 + value 1 + tags + 2.
	if r := cb.Records[0]; r.KVBytes != uint32(2*(8+12+2+1+1+1+len(ttl)+2)) {
		t.Fatalf("KVBytes %d", r.KVBytes)
	}
}

// TestRecordsRollback: a row rejected after some of its records were written (a bad value in a later
// family, a qualifier from a NULL column) leaves nothing behind: the batch is byte for byte the batch of
// the good rows alone.
func TestRecordsRollback(t *testing.T) {
	m := compileYAML(t, `
columns: [{name: id}, {name: a, cell: "d:a"}, {name: n, type: long}, {name: q}]
rowkey: [id]
cells:
  - {family: e, qualifier: "n", value: n}
  - {family: e, qualifier: "${q}", value: a}
timestamp: {value: 1}
`)
	good1, good2 := []string{"r1", "A", "1", "q1"}, []string{"r4", "D", "4", "q4"}
	rows := [][]string{good1, {"r2", "B", "x", "q2"}, {"r3", "C", "3", NUL}, good2}
	header := []string{"id", "a", "n", "q"}
	var cb CellBatch
	mp := m.NewMapper()
	rs := NewRejectSink(nil, -1)
	if err := mp.MapBatch(textBatch("r.csv", 0, 0, rows), header, &cb, rs); err != nil {
		t.Fatal(err)
	}
	if rs.Count() != 2 {
		t.Fatalf("%d rejects", rs.Count())
	}
	sameLines(t, "records", recordLines(t, &cb), []string{
		"0 0/0 r1 d@1 [a]=A", `1 0/0 r1 e@1 [n]=\x00\x00\x00\x00\x00\x00\x00\x01 q1=A`,
		"0 0/3 r4 d@1 [a]=D", `1 0/3 r4 e@1 [n]=\x00\x00\x00\x00\x00\x00\x00\x04 q4=D`,
	})
	var clean CellBatch
	if err := m.NewMapper().MapBatch(textBatch("r.csv", 0, 0, [][]string{good1, good2}), header, &clean, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cb.Buf, clean.Buf) {
		t.Fatalf("buffer after rollbacks\n got %q\nwant %q", cb.Buf, clean.Buf)
	}
	if c := mp.Counts(); c.RowsKeyed != 2 || c.RowsRejected != 2 || c.CellsEmitted != 6 {
		t.Fatalf("counts %+v", c)
	}
}

// TestRecordsParquet: Parquet rows with an ImportTsv spec over two families: a record per family, none
// for a family whose values are all NULL.
func TestRecordsParquet(t *testing.T) {
	cfg, err := ParseColumns("HBASE_ROW_KEY,d:name,p:price,d:ts,p:day,d:f,d:f32,d:ok,p:bin,d:u")
	if err != nil {
		t.Fatal(err)
	}
	m := mustCompile(t, cfg)
	b := &Batch{Source: "p.parquet", FileIndex: 1, FirstRow: 4, NumRows: 2, NumCols: 10, Record: parquetRecord(t)}
	defer b.Release()
	var cb CellBatch
	mp := m.NewMapper()
	if err := mp.MapBatch(b, nil, &cb, nil); err != nil {
		t.Fatal(err)
	}
	sameLines(t, "records", recordLines(t, &cb), []string{
		`0 1/4 -5 d@0 [f]=1e+21 [f32]=0.1 [name]=Zo\xC3\xAB [ok]=true [ts]=2024-03-01 11:00:00.25 [u]=18446744073709551615`,
		`1 1/4 -5 p@0 [bin]=\x00\xFF [day]=2024-03-01 [price]=-1.05`,
		`0 1/5 6 d@0 [ok]=false [u]=1`,
	})
	if c := mp.Counts(); c.CellsEmitted != 11 || c.NullsSkipped != 7 {
		t.Fatalf("counts %+v", c)
	}
}

// TestMapBatchAnotherMapping: a batch holding records of one mapping does not take another's, whose
// dictionary differs.
func TestMapBatchAnotherMapping(t *testing.T) {
	a := compileYAML(t, "columns: [{name: k}, {name: v, cell: \"d:v\"}]\nrowkey: [k]\ntimestamp: {value: 1}\n")
	b := compileYAML(t, "columns: [{name: k}, {name: v, cell: \"d:w\"}]\nrowkey: [k]\ntimestamp: {value: 1}\n")
	batch := textBatch("x", 0, 0, [][]string{{"k", "v"}})
	var cb CellBatch
	if err := a.NewMapper().MapBatch(batch, []string{"k", "v"}, &cb, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.NewMapper().MapBatch(batch, []string{"k", "v"}, &cb, nil); err == nil || !strings.Contains(err.Error(), "another mapping") {
		t.Fatalf("mixing mappings: %v", err)
	}
	cb.Reset()
	if err := b.NewMapper().MapBatch(batch, []string{"k", "v"}, &cb, nil); err != nil || cb.Dict != b.Dict() {
		t.Fatalf("after Reset: %v", err)
	}
	sameLines(t, "records", recordLines(t, &cb), []string{"0 0/0 k d@1 [w]=v"})
}

// TestKeyValuesErrors: KeyValues refuses records that are out of bounds, malformed or disagree with their
// RecordRef, leaving dst and refs as they were; AppendRecord refuses malformed records.
func TestKeyValuesErrors(t *testing.T) {
	m := compileYAML(t, "columns: [{name: k}, {name: v, cell: \"d:v\"}, {name: w, cell: \"d:w\"}]\nrowkey: [k]\ntimestamp: {value: 1}\n")
	var good CellBatch
	if err := m.NewMapper().MapBatch(textBatch("x", 0, 0, [][]string{{"k", "v", "w"}, {"j", "v", "w"}}), []string{"k", "v", "w"}, &good, nil); err != nil {
		t.Fatal(err)
	}
	prefix, prefixRefs := []byte("prefix"), []KVRef{{Off: 1}}
	buf, refs, err := good.KeyValues(prefix, prefixRefs)
	if err != nil || len(refs) != 5 || refs[1].Off != uint32(len(prefix)) || !bytes.HasPrefix(buf, prefix) {
		t.Fatalf("KeyValues after a prefix: %d refs, %v", len(refs), err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(cb *CellBatch)
		error string
		row   int
	}{
		{"outside", func(cb *CellBatch) { cb.Records[1].Len++ }, "outside the buffer", 1},
		{"truncated", func(cb *CellBatch) { cb.Records[1].Len -= 2 }, "malformed record", 1},
		{"garbage", func(cb *CellBatch) { cb.Buf[cb.Records[1].Off] = 0xFF }, "malformed record", 1},
		{"cells", func(cb *CellBatch) { cb.Records[1].Cells = 1 }, "holds 2 cells, its reference says 1", 1},
		{"kvbytes", func(cb *CellBatch) { cb.Records[1].KVBytes-- }, "its reference says", 1},
		{"dictionary", func(cb *CellBatch) { cb.Dict = cellrec.NewDict([][]byte{[]byte("v")}) }, "outside the dictionary", 0},
	} {
		cb := CellBatch{Buf: bytes.Clone(good.Buf), Records: slices.Clone(good.Records), Dict: good.Dict}
		tc.edit(&cb)
		buf, refs, err := cb.KeyValues(prefix, prefixRefs)
		where := fmt.Sprintf("record %d (file 0 row %d)", tc.row, tc.row)
		if err == nil || !strings.Contains(err.Error(), tc.error) || !strings.Contains(err.Error(), where) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !bytes.Equal(buf, prefix) || !slices.Equal(refs, prefixRefs) {
			t.Errorf("%s: dst %q refs %v after the error", tc.name, buf, refs)
		}
	}

	var built CellBatch
	built.Dict = good.Dict
	for i := range good.Records {
		if err := built.AppendRecord(good.Record(i), good.Records[i].Family, good.Records[i].Seq); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(built.Records, good.Records) || !bytes.Equal(built.Buf, good.Buf) {
		t.Fatalf("AppendRecord: %+v, want %+v", built.Records, good.Records)
	}
	if err := built.AppendRecord(good.Record(0)[:5], 0, 7); err == nil || len(built.Records) != 2 {
		t.Fatalf("AppendRecord of a truncated record: %v", err)
	}
}

// TestMapRecordsZeroAllocs: data-built qualifiers, several families and cell tags allocate nothing per
// batch once buffers have grown.
func TestMapRecordsZeroAllocs(t *testing.T) {
	m := compileYAML(t, `
columns: [{name: id}, {name: x}, {name: v, cell: "d:v"}, {name: ttl, type: long}]
rowkey: [id]
cells:
  - {family: e, qualifier: "${x}", value: v}
  - {family: e, qualifier: "${x}|b", value: v}
  - {family: e, qualifier: "a", value: v}
timestamp: {value: 1}
ttl: ttl
`)
	var rows [][]string
	for i := 0; i < 300; i++ {
		rows = append(rows, []string{fmt.Sprint("row", i), fmt.Sprint(i % 7), "value", "60000"})
	}
	b := textBatch("z.csv", 0, 0, rows)
	mp := m.NewMapper()
	header := []string{"id", "x", "v", "ttl"}
	var cb CellBatch
	allocs := testing.AllocsPerRun(10, func() {
		cb.Reset()
		if err := mp.MapBatch(b, header, &cb, nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per batch, want 0", allocs)
	}
	// "0" < "0|b" < "a": one e record a row, besides the d record.
	if len(cb.Records) != 600 || cb.Cells() != 1200 {
		t.Fatalf("%d records, %d cells", len(cb.Records), cb.Cells())
	}
}
