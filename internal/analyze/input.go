package analyze

import (
	"fmt"
	"slices"
)

// SetInput records what the report covers (the pipeline's counts and the sample limit) and adds the
// warnings that depend on it: rejected_rows when rows produced no cells, sample when the figures
// describe only the first rows of the input. Call it once, after Report.
func (r *Report) SetInput(in Input) {
	if in.RejectExamples == nil {
		in.RejectExamples = []string{}
	} else {
		in.RejectExamples = slices.Clone(in.RejectExamples)
	}
	r.Input = in
	add := func(code, format string, args ...any) {
		r.Warnings = append(r.Warnings, Warning{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if in.RowsRejected > 0 {
		share := 0.0
		if in.RowsRead > 0 {
			share = 100 * float64(in.RowsRejected) / float64(in.RowsRead)
		}
		add("rejected_rows", "%d of %d rows read (%.2f%%) were rejected and are not in this analysis; "+
			"`hfload run` fails on them unless max_rejects allows them (see input.reject_examples)",
			in.RowsRejected, in.RowsRead, share)
	}
	if in.Sampled {
		add("sample", "only the first %d rows of the input were analyzed (--sample %d): counts, duplicates and "+
			"region sizes describe that sample, not the whole input; rows later in the input are not checked",
			in.RowsRead, in.SampleLimit)
	}
}
