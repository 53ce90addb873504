package analyze

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes the report as indented JSON (the stable contract).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing analysis JSON: %w", err)
	}
	return nil
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	if in := r.Input; in.Files > 0 || in.RowsRead > 0 {
		p("input: %d file(s), %d rows read, %d rejected, %d NULLs skipped", in.Files, in.RowsRead, in.RowsRejected, in.NullsSkipped)
		switch {
		case in.Sampled:
			p(" (SAMPLE: stopped after the first %d rows)", in.SampleLimit)
		case in.SampleLimit > 0:
			p(" (--sample %d: the whole input is shorter)", in.SampleLimit)
		}
		p("\n")
		for _, e := range in.RejectExamples {
			p("  rejected: %s\n", e)
		}
	}
	p("rows %d, cells %d, bytes %d (KeyValue, uncompressed)\n", r.Rows, r.Cells, r.Bytes)

	d := r.Duplicates
	how := "exact: row-key fingerprints, suspects confirmed on the keys"
	switch {
	case !d.Confirmed:
		how = "row-key fingerprints only: the input could not be read twice"
	case d.Partial:
		how = "lower bounds: the confirmation reached its memory limit"
	}
	p("\nduplicates (%s)\n", how)
	p("  row keys reused by another input row: %d\n", d.Rows)
	p("  repeated cells:                       %d\n", d.Cells)
	for _, e := range d.Examples {
		what := e.Row
		if e.Kind == "cell" {
			what = e.Cell
		}
		p("  %s %s at", e.Kind, what)
		for _, o := range e.Occurrences {
			p(" file %d row %d;", o.File, o.Row)
		}
		p("\n")
	}

	p("\nregions (%d, %d empty, largest/smallest %.2f)\n", len(r.Regions), r.RegionSkew.Empty, r.RegionSkew.LargestSmallestRatio)
	for i, rg := range r.Regions {
		share := 0.0
		if r.Bytes > 0 {
			share = 100 * float64(rg.Bytes) / float64(r.Bytes)
		}
		p("  %4d [%s, %s) cells %d bytes %d (%.1f%%)\n", i, quoteKey(rg.StartKey), quoteKey(rg.EndKey), rg.Cells, rg.Bytes, share)
	}
	if k := r.KeyRange; r.Rows > 0 {
		p("  row keys from %s to %s, %d to %d bytes, common prefix %s\n", quoteKey(k.First), quoteKey(k.Last),
			k.MinLength, k.MaxLength, quoteKey(k.CommonPrefix))
	}
	p("\ninput order: %d of %d consecutive rows ascending (%.1f%%)\n", r.Order.AscendingPairs, r.Order.Pairs, 100*r.Order.AscendingFraction)

	z := r.Sizes
	p("\nsizes per cell: row key %.1f, family %.1f, qualifier %.1f, value %.1f bytes; %.2f coordinate bytes per value byte\n",
		z.AvgRowKey, z.AvgFamily, z.AvgQualifier, z.AvgValue, z.CoordinateBytesPerValueByte)
	p("  1-byte families would save %d bytes, 2-byte qualifiers %d bytes (%.1f%% of all bytes)\n",
		z.FamilySavings, z.QualifierSavings, 100*z.SavingsShare)
	p("  %d values are decimal integers as text; as 8-byte longs they would save %d bytes\n", z.NumericValues, z.NumericSavings)

	p("\nsuggested split points for %d regions (%d):\n", r.SuggestedRegions, len(r.SuggestedSplits))
	for _, s := range r.SuggestedSplits {
		p("  %s\n", s)
	}
	p("  %s\n", r.CreateCommand)

	if len(r.Warnings) > 0 {
		p("\nwarnings\n")
		for _, wn := range r.Warnings {
			p("  [%s] %s\n", wn.Code, wn.Message)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing analysis: %w", err)
	}
	return nil
}
