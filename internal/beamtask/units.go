package beamtask

import (
	"fmt"

	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/pipeline"
)

// Unit is one map task's share of the input: a whole file, or row groups [From, To) of a Parquet file.
//
// CSV files are never split. A record may hold quoted newlines, so a reader that starts at an
// arbitrary byte cannot know whether it is inside a quoted field (Hadoop's resynchronising readers
// guess, and can guess wrong); and the row ordinals that order duplicates (Seq) and name rejects are
// counted from the start of the file. A run over many files spreads over many workers; one large CSV
// file is read by one. Parquet files are cut at row groups, whose row counts the footer gives.
type Unit struct {
	Index   int   `json:"index"`
	Input   int   `json:"input"`            // index into the run's inputs
	Groups  bool  `json:"groups,omitempty"` // From and To are row groups (Parquet)
	From    int   `json:"from,omitempty"`
	To      int   `json:"to,omitempty"`
	Owner   bool  `json:"owner,omitempty"` // the unit that fingerprints the file and counts its bytes
	NumRows int64 `json:"rows,omitempty"`  // rows in the unit (Parquet; 0 = unknown)
}

// PlanUnits cuts the run's inputs into work units, in input order: one per CSV file, one per row
// group of a Parquet file (a file without row groups is one empty unit).
func PlanUnits(spec *jobs.RunSpec) ([]Unit, error) {
	var units []Unit
	for i, in := range spec.Inputs {
		if in.Path == "-" {
			return nil, fmt.Errorf("%w: a distributed run cannot read standard input", jobs.ErrConfig)
		}
		src, err := in.Open()
		if err != nil {
			return nil, fmt.Errorf("%w: open %s: %w", jobs.ErrIO, in.Path, err)
		}
		ps, ok := src.(*pipeline.ParquetSource)
		var rows []int64
		if ok {
			rows = ps.RowGroupRows()
		}
		src.Close()
		if !ok || len(rows) == 0 {
			units = append(units, Unit{Index: len(units), Input: i, Owner: true})
			continue
		}
		for g, n := range rows {
			units = append(units, Unit{Index: len(units), Input: i, Groups: true, From: g, To: g + 1, Owner: g == 0, NumRows: n})
		}
	}
	return units, nil
}

// input is the unit's share of its file as a pipeline input (unit.input), filtered by the run's
// watermark if it has one: report then tells what the filter dropped and kept (nil without).
func (t *Task) input(spec *jobs.RunSpec, unit int) (in pipeline.Input, report func() jobs.WatermarkReport, err error) {
	if unit < 0 || unit >= len(t.Units) {
		return in, nil, fmt.Errorf("beam: no unit %d", unit)
	}
	if in, err = t.Units[unit].input(spec); err != nil || t.Watermark == nil {
		return in, nil, err
	}
	ins, report, err := t.Watermark.Wrap([]pipeline.Input{in})
	if err != nil {
		return in, nil, err
	}
	return ins[0], report, nil
}

// input is the unit's share of its file as a pipeline input: Parquet restricted to the unit's row
// groups, and the file's size counted by its owner unit only.
func (u Unit) input(spec *jobs.RunSpec) (pipeline.Input, error) {
	if u.Input >= len(spec.Inputs) {
		return pipeline.Input{}, fmt.Errorf("beam: unit %d: no input %d", u.Index, u.Input)
	}
	in := spec.Inputs[u.Input]
	if !u.Owner {
		in.Size = 0
	}
	if u.Groups {
		open := in.Open
		from, to := u.From, u.To
		in.Open = func() (pipeline.Source, error) {
			src, err := open()
			if err != nil {
				return nil, err
			}
			ps, ok := src.(*pipeline.ParquetSource)
			if !ok {
				src.Close()
				return nil, fmt.Errorf("%s: planned as Parquet row groups, opened as another format", in.Path)
			}
			if err := ps.RowGroups(from, to); err != nil {
				src.Close()
				return nil, err
			}
			return ps, nil
		}
	}
	return in, nil
}
