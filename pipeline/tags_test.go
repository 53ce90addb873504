package pipeline

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestImportTsvCellTags: HBASE_CELL_TTL and HBASE_CELL_VISIBILITY become the tags TextSortReducer writes
// (visibility first, then TTL when > 0), carried by every cell and expanded after its value; bad values reject the
// row; empty fields give no tag.
func TestImportTsvCellTags(t *testing.T) {
	cfg, err := ParseColumns("HBASE_ROW_KEY,d:a,HBASE_CELL_TTL,HBASE_CELL_VISIBILITY,d:b")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Labels = map[string]int{"secret": 3, "admin": 4}
	m := mustCompile(t, cfg)
	if !m.CellTags() {
		t.Fatal("CellTags() = false for a mapping with ttl and visibility columns")
	}
	mp := m.NewMapper()
	mp.JobTimestamp = 5
	var cb CellBatch
	rows := [][]string{
		{"r1", "x", "86400000", "secret|admin", "y"}, // both tags
		{"r2", "x", "0", "", "y"},                    // TTL 0 and no expression: no tags
		{"r3", "x", "abc", "secret", "y"},            // bad TTL: rejected
		{"r4", "x", "1000", "nosuchlabel", "y"},      // unknown label: rejected
	}
	rej := NewRejectSink(nil, -1)
	if err := mp.MapBatch(textBatch("t.csv", 0, 0, rows), nil, &cb, rej); err != nil {
		t.Fatal(err)
	}
	if cb.Cells() != 4 {
		t.Fatalf("%d cells, want 4 (2 rows × 2 cells)", cb.Cells())
	}
	buf, refs := batchKeyValues(t, &cb)
	vis, err := kv.VisibilityTags("secret|admin", cfg.Labels)
	if err != nil {
		t.Fatal(err)
	}
	wantTags := append(append([]byte(nil), vis...), kv.TTLTag(86400000)...)
	for i, want := range []struct {
		value string
		tags  []byte
	}{{"x", wantTags}, {"y", wantTags}, {"x", nil}, {"y", nil}} {
		c := refs[i]
		rec := buf[c.Off : c.Off+c.Len]
		value, tags, err := splitTaggedKeyValue(rec)
		if err != nil {
			t.Fatalf("cell %d: %v", i, err)
		}
		if string(value) != want.value || !bytes.Equal(tags, want.tags) {
			t.Fatalf("cell %d: value %q tags %x, want %q %x", i, value, tags, want.value, want.tags)
		}
	}
	if got := mp.Counts().RowsRejected; got != 2 {
		t.Fatalf("%d rows rejected, want 2", got)
	}
	reasons := strings.Join(mp.rejects.locs, "\n")
	if !strings.Contains(reasons, "ttl column") || !strings.Contains(reasons, "nosuchlabel") {
		t.Fatalf("reject reasons:\n%s", reasons)
	}
}

// splitTaggedKeyValue splits a KeyValue record with tags (int32 keyLen | int32 valueLen | key | value |
// int16 tagsLen | tags), as KeyValues expands a tagged record's cells, into its value and tags.
func splitTaggedKeyValue(rec []byte) (value, tags []byte, err error) {
	_, value, n, err := kv.SplitKeyValue(rec)
	if err != nil {
		return nil, nil, err
	}
	if len(rec)-n < 2 || len(rec)-n-2 != int(binary.BigEndian.Uint16(rec[n:])) {
		return nil, nil, fmt.Errorf("KeyValue of %d bytes: %d bytes after the value are not a tags length and its tags", len(rec), len(rec)-n)
	}
	return value, rec[n+2:], nil
}

// TestYAMLMappingCellTags: the mapping forms ttl: and visibility: name columns like any other; a long
// TTL column works, and a mapping without them has no tags.
func TestYAMLMappingCellTags(t *testing.T) {
	m := compileYAML(t, `
columns:
  - {name: id}
  - {name: v, cell: "d:v"}
  - {name: ttl, type: long}
rowkey: [{column: id}]
ttl: ttl
`)
	if !m.CellTags() {
		t.Fatal("ttl: column gives no cell tags")
	}
	mp := m.NewMapper()
	mp.JobTimestamp = 1
	var cb CellBatch
	if err := mp.MapBatch(textBatch("y.csv", 0, 0, [][]string{{"a", "x", "1000"}}), []string{"id", "v", "ttl"}, &cb, NewRejectSink(nil, 0)); err != nil {
		t.Fatal(err)
	}
	buf, refs := batchKeyValues(t, &cb)
	rec := buf[refs[0].Off : refs[0].Off+refs[0].Len]
	value, tags, err := splitTaggedKeyValue(rec)
	if err != nil || string(value) != "x" || !bytes.Equal(tags, kv.TTLTag(1000)) {
		t.Fatalf("value %q tags %x (%v), want x and a 1000 ms TTL tag", value, tags, err)
	}
	if compileYAML(t, "columns: [{name: id}, {name: v, cell: \"d:v\"}]\nrowkey: [{column: id}]\n").CellTags() {
		t.Fatal("a mapping without ttl/visibility has cell tags")
	}
	if _, err := Compile(&MappingConfig{Columns: []ColumnConfig{{Name: "id"}, {Name: "v", Cell: "d:v"}},
		RowKey: []PartConfig{{Column: "id"}}, TTL: "nosuch"}); err == nil || !strings.Contains(err.Error(), "ttl") {
		t.Fatalf("ttl naming an unknown column: %v", err)
	}
}
