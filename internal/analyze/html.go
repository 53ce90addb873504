package analyze

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// htmlMaxTableRows bounds the region and column tables of the HTML page (the chart and the JSON keep
// every region).
const htmlMaxTableRows = 500

// WriteHTML writes a self-contained HTML page (no scripts, no external resources): a summary, the
// warnings, a bytes-per-region chart with axes and labels and the region table with its keys, the
// input order, the duplicates with examples, the bytes of an average cell, the columns and the
// suggested split points. Elements carry ids and data-* attributes holding the report's numbers, so a
// browser test can check the page against the JSON.
func (r *Report) WriteHTML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	esc := html.EscapeString
	p("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hfload analyze</title>\n")
	p("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<style>%s</style></head><body>\n", htmlStyle)
	p("<h1>hfload analyze</h1>\n")
	r.htmlSummary(bw)

	p("<section id=\"warnings\"><h2>Warnings</h2>\n")
	if len(r.Warnings) == 0 {
		p("<p class=\"ok\">No warnings.</p>\n")
	} else {
		p("<ul>\n")
		for _, wn := range r.Warnings {
			p("<li class=\"warning\" data-code=\"%s\"><b>%s</b> %s</li>\n", esc(wn.Code), esc(wn.Code), esc(wn.Message))
		}
		p("</ul>\n")
	}
	p("</section>\n")

	p("<section id=\"regions\"><h2>Bytes per region</h2>\n")
	p("<p>%d regions, %d empty; the largest holds %.1f%% of the bytes (largest/smallest non-empty %.2f).</p>\n",
		len(r.Regions), r.RegionSkew.Empty, 100*r.RegionSkew.LargestShare, r.RegionSkew.LargestSmallestRatio)
	writeRegionChart(bw, r)
	if k := r.KeyRange; r.Rows > 0 {
		p("<p id=\"key-range\">Row keys from <code>%s</code> to <code>%s</code>, %d to %d bytes, common prefix <code>%s</code>.</p>\n",
			esc(k.First), esc(k.Last), k.MinLength, k.MaxLength, esc(k.CommonPrefix))
	}
	p("<table id=\"region-table\"><thead><tr><th>#</th><th>start key</th><th>end key</th><th>cells</th><th>bytes</th><th>share</th></tr></thead><tbody>\n")
	for i, rg := range r.Regions {
		if i == htmlMaxTableRows {
			p("<tr><td colspan=\"6\">… %d more regions (see --json)</td></tr>\n", len(r.Regions)-i)
			break
		}
		cls := ""
		if rg.Cells == 0 {
			cls = " class=\"empty\""
		}
		p("<tr%s data-region=\"%d\"><td>%d</td><td class=\"start-key\">%s</td><td class=\"end-key\">%s</td><td>%d</td><td>%d</td><td>%.1f%%</td></tr>\n",
			cls, i, i, keyCell(rg.StartKey, "(table start)"), keyCell(rg.EndKey, "(table end)"), rg.Cells, rg.Bytes, share(rg.Bytes, r.Bytes))
	}
	p("</tbody></table>\n</section>\n")

	r.htmlOrder(bw)
	r.htmlDuplicates(bw)
	r.htmlSizes(bw)

	p("<section id=\"splits\"><h2>Suggested split points (%d regions)</h2>\n", r.SuggestedRegions)
	p("<p>Equal-bytes boundaries from the data; create the table pre-split with:</p>\n<pre id=\"create-command\">%s</pre>\n", esc(r.CreateCommand))
	if len(r.SuggestedSplits) > 0 {
		p("<ol id=\"suggested-splits\">\n")
		for _, s := range r.SuggestedSplits {
			p("<li><code>%s</code></li>\n", esc(s))
		}
		p("</ol>\n")
	}
	p("</section>\n</body></html>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing analysis HTML: %w", err)
	}
	return nil
}

const htmlStyle = `body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#222;padding:0 1em}
h1{margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
code,pre{background:#f4f4f4;font-family:ui-monospace,monospace}pre{padding:.6em;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;margin:.6em 0}td,th{padding:3px 10px;text-align:right;border-bottom:1px solid #eee}
th{background:#f7f7f7}td.start-key,td.end-key,td.key{text-align:left}tr.empty td{color:#b22}
em.edge{color:#777}
#summary{display:flex;flex-wrap:wrap;gap:.8em;margin:0;padding:0}
#summary div{background:#f5f7fa;border:1px solid #dde;border-radius:6px;padding:.5em .9em;min-width:8em}
#summary dt{font-size:.8em;color:#556}#summary dd{margin:0;font-size:1.3em;font-weight:600}
#summary dd.bad{color:#b22}
li.warning{color:#833;margin:.4em 0}li.warning b{color:#a40;margin-right:.4em}p.ok{color:#286}
svg text{font-size:12px;fill:#333}svg .axis{stroke:#444}svg .grid{stroke:#e4e4e4}
svg .bar{fill:#4a7}svg .bar.empty{fill:#d33}svg .title{font-size:13px;font-weight:600}
.legend span{display:inline-block;margin-right:1.2em}.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-1px}`

// keyCell is a key in toStringBinary form for a table cell, or the named table edge for "".
func keyCell(k, edge string) string {
	if k == "" {
		return "<em class=\"edge\">" + edge + "</em>"
	}
	return "<code>" + html.EscapeString(k) + "</code>"
}

func share(part, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(total)
}

// humanBytes formats n in decimal units with at most one decimal (50 kB, 329.7 kB, 1.2 GB), so
// that round chart ticks read round.
func humanBytes(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n), -1
	for f >= 1000 && u < 5 {
		f /= 1000
		u++
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") + " " + []string{"kB", "MB", "GB", "TB", "PB", "EB"}[u]
}

func (r *Report) htmlSummary(w io.Writer) {
	item := func(key, label, value string, bad bool) {
		cls := ""
		if bad {
			cls = " class=\"bad\""
		}
		fmt.Fprintf(w, "<div><dt>%s</dt><dd id=\"summary-%s\"%s>%s</dd></div>\n", label, key, cls, value)
	}
	fmt.Fprintf(w, "<dl id=\"summary\">\n")
	item("rows", "rows", fmt.Sprint(r.Rows), false)
	item("cells", "cells", fmt.Sprint(r.Cells), false)
	item("bytes", "KeyValue bytes", fmt.Sprintf("<span title=\"%d bytes\">%s</span>", r.Bytes, humanBytes(r.Bytes)), false)
	item("regions", "regions (empty)", fmt.Sprintf("%d (%d)", len(r.Regions), r.RegionSkew.Empty), r.RegionSkew.Empty > 0)
	item("duplicate-rows", "duplicate row keys", fmt.Sprint(r.Duplicates.Rows), r.Duplicates.Rows > 0)
	item("duplicate-cells", "duplicate cells", fmt.Sprint(r.Duplicates.Cells), r.Duplicates.Cells > 0)
	item("ascending", "ascending input", fmt.Sprintf("%.1f%%", 100*r.Order.AscendingFraction), hasCode(r, "monotonic_lead"))
	item("warnings", "warnings", fmt.Sprint(len(r.Warnings)), len(r.Warnings) > 0)
	fmt.Fprintf(w, "</dl>\n")
	if in := r.Input; in.Files > 0 || in.RowsRead > 0 {
		fmt.Fprintf(w, "<p id=\"input\">Input: %d file(s), %d rows read, %d rejected, %d NULLs skipped", in.Files, in.RowsRead,
			in.RowsRejected, in.NullsSkipped)
		if in.Sampled {
			fmt.Fprintf(w, " <b class=\"warning\">(a sample: the first %d rows only)</b>", in.SampleLimit)
		}
		fmt.Fprintf(w, ".</p>\n")
		for _, e := range in.RejectExamples {
			fmt.Fprintf(w, "<pre class=\"reject\">%s</pre>\n", html.EscapeString(e))
		}
	}
}

func hasCode(r *Report, code string) bool {
	for _, w := range r.Warnings {
		if w.Code == code {
			return true
		}
	}
	return false
}

// niceStep returns a round tick step (1, 2 or 5 times a power of ten) for about n ticks up to max.
func niceStep(max float64, n int) float64 {
	if max <= 0 {
		return 1
	}
	raw := max / float64(n)
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			return m * pow
		}
	}
	return 10 * pow
}

// writeRegionChart draws one bar per region (height: bytes), with a y axis of byte ticks and grid
// lines, x-axis labels (region numbers, thinned out when there are many) and axis titles. Empty regions
// are red marks on the axis. Every bar has a tooltip with its keys and counts.
func writeRegionChart(w io.Writer, r *Report) {
	const width, height = 960, 320
	const left, right, top, bottom = 80, 20, 30, 60
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	n := len(r.Regions)
	var maxBytes int64
	for _, rg := range r.Regions {
		maxBytes = max(maxBytes, rg.Bytes)
	}
	step := niceStep(float64(maxBytes), 4)
	yMax := step * math.Ceil(float64(maxBytes)/step)
	if yMax <= 0 {
		yMax = 1
	}
	fmt.Fprintf(w, "<svg id=\"region-chart\" role=\"img\" aria-label=\"bytes per region\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		width, height, width, height)
	fmt.Fprintf(w, "<text class=\"title\" x=\"%d\" y=\"18\">KeyValue bytes per region</text>\n", left)
	for v := 0.0; v <= yMax+step/2; v += step {
		y := float64(top) + ph - ph*v/yMax
		fmt.Fprintf(w, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", left, y, width-right, y)
		fmt.Fprintf(w, "<text class=\"tick y-tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left-6, y+4, humanBytes(int64(v)))
	}
	fmt.Fprintf(w, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", left, top, left, top+int(ph))
	fmt.Fprintf(w, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", left, top+int(ph), width-right, top+int(ph))
	fmt.Fprintf(w, "<text class=\"axis-title\" transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">bytes (uncompressed)</text>\n", top+int(ph)/2)
	fmt.Fprintf(w, "<text class=\"axis-title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">region (by start key; red: empty)</text>\n", left+int(pw)/2, height-10)
	if n == 0 {
		fmt.Fprintf(w, "</svg>\n")
		return
	}
	bw := pw / float64(n)
	labelEvery := max(1, int(math.Ceil(float64(n)/24)))
	for i, rg := range r.Regions {
		x := float64(left) + float64(i)*bw
		gap := math.Min(2, bw*0.2)
		tip := fmt.Sprintf("region %d [%s, %s): %d bytes, %d cells", i, html.EscapeString(orEdge(rg.StartKey, "start")),
			html.EscapeString(orEdge(rg.EndKey, "end")), rg.Bytes, rg.Cells)
		if rg.Cells == 0 {
			fmt.Fprintf(w, "<rect class=\"bar empty\" data-region=\"%d\" data-bytes=\"0\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"5\"><title>%s (empty)</title></rect>\n",
				i, x+gap/2, float64(top)+ph-5, math.Max(bw-gap, 0.5), tip)
		} else {
			h := ph * float64(rg.Bytes) / yMax
			fmt.Fprintf(w, "<rect class=\"bar\" data-region=\"%d\" data-bytes=\"%d\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"><title>%s</title></rect>\n",
				i, rg.Bytes, x+gap/2, float64(top)+ph-h, math.Max(bw-gap, 0.5), h, tip)
		}
		if i%labelEvery == 0 {
			fmt.Fprintf(w, "<text class=\"tick x-tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", x+bw/2, top+int(ph)+16, i)
		}
	}
	fmt.Fprintf(w, "</svg>\n")
}

func orEdge(k, edge string) string {
	if k == "" {
		return "table " + edge
	}
	return k
}

func (r *Report) htmlOrder(w io.Writer) {
	o := r.Order
	pct := 100 * o.AscendingFraction
	fmt.Fprintf(w, "<section id=\"order\" data-ascending-fraction=\"%g\"><h2>Input order</h2>\n", o.AscendingFraction)
	fmt.Fprintf(w, "<p>%d of %d consecutive input rows (within each file) have an ascending row key: <b>%.1f%%</b>. "+
		"Random keys give about 50%%; near 100%% means the key leads with a time or a sequence and every new write "+
		"goes to the last region.</p>\n", o.AscendingPairs, o.Pairs, pct)
	const width, left, barW = 960, 80, 800
	fill := "#4a7"
	if hasCode(r, "monotonic_lead") {
		fill = "#d33"
	}
	fmt.Fprintf(w, "<svg id=\"order-chart\" role=\"img\" aria-label=\"ascending share\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"70\" viewBox=\"0 0 %d 70\">\n", width, width)
	fmt.Fprintf(w, "<text x=\"0\" y=\"25\">ascending</text><rect x=\"%d\" y=\"10\" width=\"%d\" height=\"22\" fill=\"#eee\"/>", left, barW)
	fmt.Fprintf(w, "<rect class=\"order-bar\" x=\"%d\" y=\"10\" width=\"%.1f\" height=\"22\" fill=\"%s\"/>\n", left, barW*o.AscendingFraction, fill)
	fmt.Fprintf(w, "<line class=\"axis\" x1=\"%d\" y1=\"6\" x2=\"%d\" y2=\"36\" stroke-dasharray=\"3 2\"/>\n", left+barW/2, left+barW/2)
	for _, t := range []int{0, 25, 50, 75, 100} {
		fmt.Fprintf(w, "<text class=\"tick\" x=\"%d\" y=\"52\" text-anchor=\"middle\">%d%%</text>", left+barW*t/100, t)
	}
	fmt.Fprintf(w, "<text x=\"%d\" y=\"66\" text-anchor=\"middle\">share of consecutive rows ascending (dashed: random keys)</text>\n</svg>\n</section>\n", left+barW/2)
}

func (r *Report) htmlDuplicates(w io.Writer) {
	d := r.Duplicates
	esc := html.EscapeString
	fmt.Fprintf(w, "<section id=\"duplicates\"><h2>Duplicates</h2>\n")
	how := "exact: row-key fingerprints, suspects confirmed on the keys by a second read of the input"
	switch {
	case !d.Confirmed:
		how = "row-key fingerprints only: the input could not be read twice, so nothing is confirmed"
	case d.Partial:
		how = "lower bounds: the confirmation reached its memory limit"
	}
	fmt.Fprintf(w, "<p><span id=\"duplicate-rows\">%d</span> input rows reuse a row key another input row produced; "+
		"<span id=\"duplicate-cells\">%d</span> cells repeat another cell's row, family, qualifier, timestamp and type "+
		"(HBase keeps one). <small>(%s)</small></p>\n", d.Rows, d.Cells, how)
	if len(d.Examples) == 0 {
		fmt.Fprintf(w, "<p class=\"ok\">No duplicate row keys or cells.</p>\n</section>\n")
		return
	}
	fmt.Fprintf(w, "<table id=\"duplicate-examples\"><thead><tr><th>kind</th><th>row key or cell</th><th>input rows (file:row, 0-based)</th></tr></thead><tbody>\n")
	for _, e := range d.Examples {
		what := e.Row
		if e.Kind == "cell" {
			what = e.Cell
		}
		var occ []string
		for _, o := range e.Occurrences {
			occ = append(occ, fmt.Sprintf("%d:%d", o.File, o.Row))
		}
		fmt.Fprintf(w, "<tr data-kind=\"%s\"><td>%s</td><td class=\"key\"><code>%s</code></td><td class=\"key\">%s</td></tr>\n",
			esc(e.Kind), esc(e.Kind), esc(what), strings.Join(occ, ", "))
	}
	fmt.Fprintf(w, "</tbody></table>\n</section>\n")
}

// htmlSizes draws the bytes of an average cell as one stacked bar (row key, family, qualifier, value
// and the 20 fixed bytes of lengths, timestamp and type) and lists the columns.
func (r *Report) htmlSizes(w io.Writer) {
	z := r.Sizes
	esc := html.EscapeString
	fmt.Fprintf(w, "<section id=\"sizes\"><h2>Bytes of an average cell</h2>\n")
	parts := []struct {
		name, color string
		v           float64
	}{
		{"row key", "#4477aa", z.AvgRowKey}, {"family", "#66ccee", z.AvgFamily}, {"qualifier", "#228833", z.AvgQualifier},
		{"value", "#ccbb44", z.AvgValue}, {"lengths, timestamp, type", "#bbbbbb", 20},
	}
	var total float64
	for _, pt := range parts {
		total += pt.v
	}
	if r.Cells > 0 && total > 0 {
		const width, barW = 960, 940
		fmt.Fprintf(w, "<svg id=\"size-chart\" role=\"img\" aria-label=\"bytes of an average cell\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"60\" viewBox=\"0 0 %d 60\">\n", width, width)
		x := 0.0
		for _, pt := range parts {
			wd := barW * pt.v / total
			fmt.Fprintf(w, "<rect class=\"size-part\" data-part=\"%s\" x=\"%.1f\" y=\"5\" width=\"%.1f\" height=\"26\" fill=\"%s\"><title>%s: %.1f bytes</title></rect>",
				esc(pt.name), x, wd, pt.color, esc(pt.name), pt.v)
			if wd > 40 {
				fmt.Fprintf(w, "<text x=\"%.1f\" y=\"23\" text-anchor=\"middle\">%.1f</text>", x+wd/2, pt.v)
			}
			x += wd
		}
		fmt.Fprintf(w, "\n<text x=\"0\" y=\"50\">%.1f bytes per cell (KeyValue, uncompressed); %.2f coordinate bytes per value byte</text>\n</svg>\n",
			total, z.CoordinateBytesPerValueByte)
		fmt.Fprintf(w, "<p class=\"legend\">")
		for _, pt := range parts {
			fmt.Fprintf(w, "<span><i style=\"background:%s\"></i>%s %.1f</span>", pt.color, esc(pt.name), pt.v)
		}
		fmt.Fprintf(w, "</p>\n")
	}
	fmt.Fprintf(w, "<p>1-byte family names would save %d bytes and 2-byte qualifiers %d bytes (%.1f%% of all bytes). "+
		"%d values are decimal integers stored as text; as 8-byte longs they would save %d bytes.</p>\n",
		z.FamilySavings, z.QualifierSavings, 100*z.SavingsShare, z.NumericValues, z.NumericSavings)
	if len(r.Columns) > 0 {
		fmt.Fprintf(w, "<table id=\"columns\"><thead><tr><th>column</th><th>cells</th><th>value bytes</th><th>integers as text</th><th>saved as longs</th></tr></thead><tbody>\n")
		for i, c := range r.Columns {
			if i == htmlMaxTableRows {
				fmt.Fprintf(w, "<tr><td colspan=\"5\">… %d more columns (see --json)</td></tr>\n", len(r.Columns)-i)
				break
			}
			fmt.Fprintf(w, "<tr><td class=\"key\"><code>%s:%s</code></td><td>%d</td><td>%d</td><td>%d</td><td>%d</td></tr>\n",
				esc(c.Family), esc(c.Qualifier), c.Cells, c.ValueBytes, c.NumericValues, c.NumericSavings)
		}
		fmt.Fprintf(w, "</tbody></table>\n")
	}
	fmt.Fprintf(w, "</section>\n")
}
