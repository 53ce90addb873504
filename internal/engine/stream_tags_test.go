package engine

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// TestStreamMixedTags: records whose cells carry tags on some cells and none on others (the stream hands
// runs of untagged cells to the writer together and a tagged cell alone) are written with every cell,
// in order, each with its own tags, under every duplicate policy (policy last holds each view's last
// cell, tagged or not, until the next view).
func TestStreamMixedTags(t *testing.T) {
	cfg, err := pipeline.ParseColumns("HBASE_ROW_KEY,f:a,f:b,f:c,f:d,f:e,HBASE_CELL_TTL")
	if err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := m.Dict()
	if !d.Tagged() {
		t.Fatal("a mapping with a TTL column should have a tagged dictionary")
	}
	tag := kv.TTLTag(60000)
	// Which cells of a record carry tags, per record (5 cells each; qualifiers a..e, plus literal "z").
	patterns := [][]bool{
		{false, false, false, false, false},
		{true, false, false, false, false},
		{false, false, true, false, false},
		{false, false, false, false, true},
		{true, true, false, true, false},
		{false, true, true, true, false},
		{true, true, true, true, true},
	}
	type cell struct {
		row, q, v string
		tagged    bool
	}
	var recs [][]byte
	var want []cell // every record's cells, in key order (rows ascending, one record per row here)
	for r := 0; r < 40; r++ {
		row := fmt.Sprintf("row%03d", r)
		pat := patterns[r%len(patterns)]
		rec := cellrec.AppendHeader(nil, []byte(row), []byte("f"), 1700000000000, kv.TypePut)
		for i, tagged := range pat {
			q, v := []byte{byte('a' + i)}, []byte(fmt.Sprintf("v%d-%d", r, i))
			var tg []byte
			if tagged {
				tg = tag
			}
			qi, ok := d.Index(q)
			if !ok {
				t.Fatalf("qualifier %s not in the dictionary", q)
			}
			rec = d.AppendCellTags(rec, qi, v, tg)
			want = append(want, cell{row, string(q), string(v), tagged})
		}
		if r%3 == 0 { // a literal qualifier after the dictionary's
			rec = d.AppendLiteralCellTags(rec, []byte("z"), []byte("lit"), nil)
			want = append(want, cell{row, "z", "lit", false})
		}
		if _, err := d.Validate(rec); err != nil {
			t.Fatalf("record %d: %v", r, err)
		}
		recs = append(recs, rec)
	}
	for _, pol := range []DuplicatePolicy{DuplicatesError, DuplicatesFirst, DuplicatesLast, DuplicatesKeep} {
		t.Run(fmt.Sprint(pol), func(t *testing.T) {
			spec := &Spec{Table: "t", Mapping: m, Pipeline: pipeline.RunOptions{Timestamp: 1700000000000},
				Memory: 64 << 20, TempDir: t.TempDir(), Duplicates: pol,
				Family: func(string) hfilewriter.WriterOptions { return hfilewriter.WriterOptions{BlockSize: 256} }}
			var sink memSink
			if _, err := WriteRegion(context.Background(), spec, &sink, partition.Splits{}, 0, 0, func(add func([]byte, uint64) error) error {
				for i, rec := range recs {
					if err := add(rec, uint64(i)); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(sink.files) != 1 {
				t.Fatalf("%d files, want 1", len(sink.files))
			}
			for name, b := range sink.files {
				r, err := hfilewriter.OpenReader(bytes.NewReader(b), int64(len(b)))
				if err != nil {
					t.Fatal(err)
				}
				it := r.Iter()
				i := 0
				for ; it.Next(); i++ {
					c := it.Cell()
					if i >= len(want) {
						t.Fatalf("%s: more cells than the %d written", name, len(want))
					}
					w := want[i]
					var wt []byte
					if w.tagged {
						wt = tag
					}
					if string(c.Row) != w.row || string(c.Qualifier) != w.q || string(c.Value) != w.v || !bytes.Equal(c.Tags, wt) {
						t.Fatalf("%s: cell %d is %s/%s=%s tags %x, want %s/%s=%s tags %x", name, i, c.Row, c.Qualifier, c.Value, c.Tags, w.row, w.q, w.v, wt)
					}
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
				if i != len(want) {
					t.Fatalf("%s: %d cells, want %d", name, i, len(want))
				}
			}
		})
	}
}
