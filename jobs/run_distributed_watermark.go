package jobs

import (
	"fmt"

	"github.com/hfload/hfload/pipeline"
)

// An incremental run with a watermark filters its inputs' rows by the previous run's mark and raises a
// new one from the rows it keeps. A distributed driver's workers each filter their share of the inputs
// (WatermarkSettings.Wrap) and report what they saw (WatermarkReport); the launcher adds the reports to
// its run's filter (RunSpec.AddWatermarkReport), whose totals and mark go into the manifest and the
// state, as those of `hfload run` do.

// WatermarkSettings are what a worker needs to filter as the launcher's run would: the column, its type,
// its position for headerless inputs and the previous mark (nil: every row is new).
type WatermarkSettings struct {
	Column string     `json:"column"`
	Type   string     `json:"type"`
	Index  int        `json:"index"`
	Prev   *Watermark `json:"prev,omitempty"`
}

// WatermarkReport is what one worker's filter saw: the rows it dropped as not above the previous mark,
// and the largest value it kept (canonical text; nil when it kept no row).
type WatermarkReport struct {
	Filtered int64   `json:"filtered"`
	Max      *string `json:"max,omitempty"`
}

// Watermark returns the settings of the run's watermark filter, nil when the run has none (not
// incremental, or no incremental.watermark).
func (s *RunSpec) Watermark() *WatermarkSettings {
	f := s.watermark
	if f == nil {
		return nil
	}
	w := &WatermarkSettings{Column: f.column, Type: f.typ, Index: f.colIdx}
	if f.prev != nil {
		w.Prev = &Watermark{Column: f.column, Type: f.typ, Value: f.prevTxt}
	}
	return w
}

// Wrap returns ins with sources that filter by the watermark (a fresh filter), and a function that
// reports what they filtered and kept so far.
func (w *WatermarkSettings) Wrap(ins []pipeline.Input) ([]pipeline.Input, func() WatermarkReport, error) {
	f, err := newWatermarkFilter(w.Column, w.Type, w.Index, w.Prev)
	if err != nil {
		return nil, nil, err
	}
	report := func() WatermarkReport {
		r := WatermarkReport{Filtered: f.Filtered()}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.hasMax {
			v := f.max.canonical(f.typ)
			r.Max = &v
		}
		return r
	}
	return f.wrap(ins), report, nil
}

// AddWatermarkReport adds a worker's report to the run's filter: its filtered rows to the count, its
// largest kept value to the new mark. A run without a watermark takes no report.
func (s *RunSpec) AddWatermarkReport(r WatermarkReport) error {
	f := s.watermark
	if f == nil {
		if r.Filtered != 0 || r.Max != nil {
			return fmt.Errorf("watermark report for a run without a watermark")
		}
		return nil
	}
	f.filter.Add(r.Filtered)
	if r.Max == nil {
		return nil
	}
	v, err := parseWatermarkValue(f.typ, *r.Max, nil)
	if err != nil {
		return fmt.Errorf("watermark report of %s: %w", f.column, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.hasMax || wmCompare(f.typ, &v, &f.max) > 0 {
		f.max, f.hasMax = v, true
	}
	return nil
}
