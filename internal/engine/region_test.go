package engine

import (
	"bytes"
	"context"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/pipeline"
)

// TestWriteRegionMatchesLoad: writing every (region, family) with WriteRegion, fed the records the
// pipeline maps, gives the files Load writes, byte for byte (40 rows of 10 keys: policy last decides).
func TestWriteRegionMatchesLoad(t *testing.T) {
	csv := testCSV(40)
	var whole memSink
	spec := testSpec(t, csv)
	spec.Duplicates = DuplicatesLast
	res, err := Load(context.Background(), spec, &whole)
	if err != nil {
		t.Fatal(err)
	}
	spec = testSpec(t, csv)
	spec.Duplicates = DuplicatesLast
	type rec struct {
		b   []byte
		seq uint64
	}
	var recs []rec
	var fams []int
	if _, err := pipeline.Run(context.Background(), spec.Inputs, spec.Mapping, spec.Pipeline, func(cb *pipeline.CellBatch) error {
		for i, r := range cb.Records {
			recs = append(recs, rec{append([]byte(nil), cb.Record(i)...), r.Seq})
			fams = append(fams, int(r.Family))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var parts memSink
	files := 0
	for region := 0; region <= len(spec.Splits); region++ {
		for fam := range spec.Mapping.Families() {
			r, err := WriteRegion(context.Background(), spec, &parts, spec.Splits, region, fam, func(add func([]byte, uint64) error) error {
				for i, rc := range recs {
					if fams[i] == fam && spec.Splits.Region(cellrec.Row(rc.b)) == region {
						if err := add(rc.b, rc.seq); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			files += len(r.Files)
		}
	}
	if files != len(res.Files) || len(parts.files) != len(whole.files) {
		t.Fatalf("WriteRegion wrote %d files (%d kept), Load %d", files, len(parts.files), len(res.Files))
	}
	for name, b := range whole.files {
		if !bytes.Equal(parts.files[name], b) {
			t.Errorf("%s differs", name)
		}
	}
}
