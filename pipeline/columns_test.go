package pipeline

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestParseColumnsImportTsv(t *testing.T) {
	cfg, err := ParseColumns("HBASE_ROW_KEY, d:name ,d:age,HBASE_TS_KEY,m")
	if err != nil {
		t.Fatal(err)
	}
	m := mustCompile(t, cfg)
	if got := m.Families(); len(got) != 2 || got[0] != "d" || got[1] != "m" {
		t.Fatalf("families %v", got)
	}
	b := textBatch("in.tsv", 3, 10, [][]string{
		{"row1", "Ann", "42", "1700000000000", "x"},
		{"row2", NUL, "", "5", "é\xff"},   // NULL: no cell (skip); empty text: empty cell; bytes are not checked
		{"", "Bob", "1", "5", "y"},        // empty row key
		{"row4", "Cy", "abc", "12x", "z"}, // bad timestamp; age stays text
	})
	var cb CellBatch
	var rejects bytes.Buffer
	rs := NewRejectSink(&rejects, -1)
	mp := m.NewMapper()
	if err := mp.MapBatch(b, nil, &cb, rs); err != nil {
		t.Fatal(err)
	}
	equalLines(t, cellLines(t, &cb), []string{
		"0 3/10 row1\td:name\t1700000000000\tPut\tAnn",
		"0 3/10 row1\td:age\t1700000000000\tPut\t42",
		"1 3/10 row1\tm:\t1700000000000\tPut\tx",
		"0 3/11 row2\td:age\t5\tPut\t",
		"1 3/11 row2\tm:\t5\tPut\t\\xC3\\xA9\\xFF",
	})
	c := mp.Counts()
	if c.RowsRead != 4 || c.RowsKeyed != 2 || c.RowsRejected != 2 || c.CellsEmitted != 5 || c.NullsSkipped != 1 {
		t.Fatalf("counts %+v", c)
	}
	lines := strings.Split(strings.TrimSpace(rejects.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("rejects: %q", rejects.String())
	}
	var r struct {
		Source string
		Line   int64
		Reason string
		Raw    string
	}
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil {
		t.Fatal(err)
	}
	if r.Source != "in.tsv" || r.Line != 14 || r.Reason != "empty row key" || r.Raw != ",Bob,1,5,y" {
		t.Fatalf("reject 0: %+v", r)
	}
	if err := json.Unmarshal([]byte(lines[1]), &r); err != nil {
		t.Fatal(err)
	}
	if r.Line != 15 || !strings.Contains(r.Reason, "timestamp") || !strings.Contains(r.Reason, `"12x"`) {
		t.Fatalf("reject 1: %+v", r)
	}
}

func TestParseColumnsErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"", "empty"},
		{"d:a,d:b", "exactly one column as HBASE_ROW_KEY"},
		{"HBASE_ROW_KEY,HBASE_ROW_KEY,d:a", "twice"},
		{"HBASE_ROW_KEY,HBASE_TS_KEY", "in addition to the row key"},
		{"HBASE_ROW_KEY,d:a,HBASE_CELL_TTL,HBASE_CELL_TTL", "twice"},
		{"HBASE_ROW_KEY,d:a,HBASE_CELL_VISIBILITY,HBASE_CELL_VISIBILITY", "twice"},
		{"HBASE_ROW_KEY,d:a,,d:b", "empty entry"},
		{"HBASE_ROW_KEY,:a", "empty family"},
	} {
		_, err := ParseColumns(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseColumns(%q) = %v, want error containing %q", tc.spec, err, tc.want)
		}
	}
}

func TestParseColumnsWidth(t *testing.T) {
	cfg, err := ParseColumns("HBASE_ROW_KEY,d:a,HBASE_ATTRIBUTES_KEY,d:b")
	if err != nil {
		t.Fatal(err)
	}
	m := mustCompile(t, cfg)
	// Fewer fields than the spec: missing trailing columns produce no cells (ImportTsv).
	var cb CellBatch
	if err := m.NewMapper().MapBatch(textBatch("f", 0, 0, [][]string{{"k", "v"}}), nil, &cb, NewRejectSink(nil, -1)); err != nil {
		t.Fatal(err)
	}
	equalLines(t, cellLines(t, &cb), []string{"0 0/0 k\td:a\t0\tPut\tv"})
	// More fields than the spec: every row is rejected ("Excessive columns").
	cb = CellBatch{}
	mp := m.NewMapper()
	rs := NewRejectSink(nil, -1)
	if err := mp.MapBatch(textBatch("f", 0, 0, [][]string{{"k", "v", "a", "b", "extra"}}), nil, &cb, rs); err != nil {
		t.Fatal(err)
	}
	if cb.Cells() != 0 || rs.Count() != 1 || mp.Counts().RowsRejected != 1 {
		t.Fatalf("cells %d rejects %d", cb.Cells(), rs.Count())
	}
}

// TestParseColumnsYAMLRoundTrip: a parsed spec written as YAML and read back maps rows the same way.
func TestParseColumnsYAMLRoundTrip(t *testing.T) {
	cfg, err := ParseColumns("HBASE_ROW_KEY,d:a,HBASE_TS_KEY")
	if err != nil {
		t.Fatal(err)
	}
	text, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var back MappingConfig
	if err := yaml.Unmarshal(text, &back); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	rows := [][]string{{"k", NUL, "7"}, {"k2", "v", "8"}, {"k3", "v", "9"}}
	var a, b CellBatch
	if err := mustCompile(t, cfg).NewMapper().MapBatch(textBatch("f", 0, 0, rows), nil, &a, nil); err != nil {
		t.Fatal(err)
	}
	if err := mustCompile(t, &back).NewMapper().MapBatch(textBatch("f", 0, 0, rows), nil, &b, nil); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	equalLines(t, cellLines(t, &b), cellLines(t, &a))
	if a.Cells() != 2 { // the NULL of row k produces no cell
		t.Fatalf("%d cells", a.Cells())
	}
}

// TestSkipEmptyColumns: by default a NULL field (here NUL: an empty unquoted CSV field or the NULL marker)
// produces no cell and an empty non-NULL field ("" quoted) an empty cell; SkipEmptyColumns
// (-Dimporttsv.skip.empty.columns=true) drops both.
func TestSkipEmptyColumns(t *testing.T) {
	rows := [][]string{{"k1", "", "x"}, {"k2", NUL, ""}}
	for _, tc := range []struct {
		opts []ImportTsvOption
		want []string
	}{
		{nil, []string{"0 0/0 k1\td:a\t0\tPut\t", "0 0/0 k1\td:b\t0\tPut\tx", "0 0/1 k2\td:b\t0\tPut\t"}},
		{[]ImportTsvOption{SkipEmptyColumns}, []string{"0 0/0 k1\td:b\t0\tPut\tx"}},
	} {
		cfg, err := ParseColumns("HBASE_ROW_KEY,d:a,d:b", tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		var cb CellBatch
		mp := mustCompile(t, cfg).NewMapper()
		if err := mp.MapBatch(textBatch("f", 0, 0, rows), nil, &cb, nil); err != nil {
			t.Fatal(err)
		}
		equalLines(t, cellLines(t, &cb), tc.want)
		if c := mp.Counts(); c.NullsSkipped != int64(4-len(tc.want)) || c.CellsEmitted != int64(len(tc.want)) {
			t.Fatalf("counts %+v", c)
		}
	}
}
