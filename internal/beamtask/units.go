package beamtask

import (
	"fmt"

	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/pipeline"
)

// Unit is one map task's share of the input: a whole file, row groups [From, To) of a Parquet file,
// or the records of a CSV file that start in bytes [Start, End) (SplitCSV).
//
// A CSV file is cut only when asked (Options.CSVUnitSize) and only when uncompressed (a .gz or .zst
// stream cannot be entered in the middle). A chunk's reader starts at the first line start at or
// after Start and reads on past End to its record's end (pipeline.CSVRange). A line start inside a
// quoted field (a quoted line break) is not a record start: which line starts are is known only by
// reading from the file's start, so every chunk reports where it started and where it stopped, and a
// chunk must start where the one before it stopped (checked by Collect and the reducers; the first
// chunk starts at the file's start, so by induction every chunk read true records). A record that
// spans a cut fails the run, nothing committed; the message says to read the file whole. Line
// numbers and row ordinals are counted per chunk and offset by the chunks before it (unit spans): the
// reducers add the row offset to each record's Seq, Collect the line offset to each reject.
type Unit struct {
	Index   int   `json:"index"`
	Input   int   `json:"input"`            // index into the run's inputs
	Groups  bool  `json:"groups,omitempty"` // From and To are row groups (Parquet)
	From    int   `json:"from,omitempty"`
	To      int   `json:"to,omitempty"`
	Owner   bool  `json:"owner,omitempty"` // the unit that fingerprints the file and counts its bytes
	NumRows int64 `json:"rows,omitempty"`  // rows in the unit (Parquet; 0 = unknown)
	// Chunk > 0 or Chunked: the unit reads the records that start in bytes [Start, End) of a CSV
	// file, the file's chunk number Chunk (0 is its owner).
	Chunked bool  `json:"chunked,omitempty"`
	Chunk   int   `json:"chunk,omitempty"`
	Start   int64 `json:"start,omitempty"`
	End     int64 `json:"end,omitempty"`
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
	in, report, _, err = t.unitInput(spec, unit)
	return in, report, err
}

// unitInput is input; for a CSV chunk, chunk returns the source its Open opened (for its span; nil
// before Open, and for other units).
func (t *Task) unitInput(spec *jobs.RunSpec, unit int) (in pipeline.Input, report func() jobs.WatermarkReport, chunk func() *pipeline.CSVSource, err error) {
	if unit < 0 || unit >= len(t.Units) {
		return in, nil, nil, fmt.Errorf("beam: no unit %d", unit)
	}
	u := t.Units[unit]
	if in, err = u.input(t, spec); err != nil {
		return in, nil, nil, err
	}
	var src *pipeline.CSVSource
	chunk = func() *pipeline.CSVSource { return src }
	if u.Chunked {
		open := in.Open
		in.Open = func() (pipeline.Source, error) {
			s, err := open()
			if cs, ok := s.(*pipeline.CSVSource); ok {
				src = cs
			}
			return s, err
		}
	}
	if t.Watermark == nil {
		return in, nil, chunk, nil
	}
	ins, report, err := t.Watermark.Wrap([]pipeline.Input{in})
	if err != nil {
		return in, nil, nil, err
	}
	return ins[0], report, chunk, nil
}

// input is the unit's share of its file as a pipeline input: Parquet restricted to the unit's row
// groups, and the file's size counted by its owner unit only.
func (u Unit) input(t *Task, spec *jobs.RunSpec) (pipeline.Input, error) {
	if u.Input >= len(spec.Inputs) {
		return pipeline.Input{}, fmt.Errorf("beam: unit %d: no input %d", u.Index, u.Input)
	}
	in := spec.Inputs[u.Input]
	if !u.Owner {
		in.Size = 0
	}
	if u.Chunked {
		l := t.layout(u.Input)
		return in.Range(pipeline.CSVRange{From: u.Start, To: u.End, Header: l.Header, Fields: l.Fields})
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
