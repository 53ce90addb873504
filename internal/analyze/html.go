package analyze

import (
	"bufio"
	"fmt"
	"html"
	"io"
)

// WriteHTML writes a self-contained HTML page: the summary, an inline SVG bar chart of bytes per
// region, the warnings and the suggested create command. It uses no scripts and no external resources.
func (r *Report) WriteHTML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	esc := html.EscapeString
	p("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hfload analyze</title>\n")
	p("<style>body{font-family:sans-serif;margin:2em}code,pre{background:#f4f4f4}td,th{padding:2px 8px;text-align:right}" +
		".warn{color:#a40}</style></head><body>\n")
	p("<h1>hfload analyze</h1>\n<p>%d rows, %d cells, %d bytes (KeyValue, uncompressed)</p>\n", r.Rows, r.Cells, r.Bytes)

	if in := r.Input; in.Files > 0 || in.RowsRead > 0 {
		p("<p>input: %d file(s), %d rows read, %d rejected", in.Files, in.RowsRead, in.RowsRejected)
		if in.Sampled {
			p(" <b class=\"warn\">(sample: the first %d rows only)</b>", in.SampleLimit)
		}
		p("</p>\n")
	}
	p("<h2>Bytes per region</h2>\n")
	writeRegionChart(bw, r)
	p("<table><tr><th>#</th><th>start</th><th>end</th><th>cells</th><th>bytes</th></tr>\n")
	for i, rg := range r.Regions {
		p("<tr><td>%d</td><td><code>%s</code></td><td><code>%s</code></td><td>%d</td><td>%d</td></tr>\n",
			i, esc(rg.StartKey), esc(rg.EndKey), rg.Cells, rg.Bytes)
	}
	p("</table>\n")

	if len(r.Warnings) > 0 {
		p("<h2>Warnings</h2>\n<ul>\n")
		for _, wn := range r.Warnings {
			p("<li class=\"warn\"><b>%s</b>: %s</li>\n", esc(wn.Code), esc(wn.Message))
		}
		p("</ul>\n")
	}
	d := r.Duplicates
	p("<h2>Duplicates</h2>\n<p>row keys reused by another input row: %d; repeated cells: %d</p>\n", d.Rows, d.Cells)
	z := r.Sizes
	p("<h2>Sizes</h2>\n<p>per cell: row key %.1f, family %.1f, qualifier %.1f, value %.1f bytes; %.2f coordinate bytes per value byte</p>\n",
		z.AvgRowKey, z.AvgFamily, z.AvgQualifier, z.AvgValue, z.CoordinateBytesPerValueByte)
	p("<h2>Suggested split points (%d regions)</h2>\n<pre>%s</pre>\n", r.SuggestedRegions, esc(r.CreateCommand))
	p("</body></html>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing analysis HTML: %w", err)
	}
	return nil
}

// writeRegionChart draws one bar per region, heights proportional to bytes; empty regions are marked
// in red on the axis.
func writeRegionChart(w io.Writer, r *Report) {
	const width, height, pad = 800, 240, 20
	n := len(r.Regions)
	var maxBytes int64
	for _, rg := range r.Regions {
		maxBytes = max(maxBytes, rg.Bytes)
	}
	fmt.Fprintf(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		width, height+pad, width, height+pad)
	fmt.Fprintf(w, "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>\n", height, width, height)
	if n == 0 {
		fmt.Fprintf(w, "</svg>\n")
		return
	}
	bw := float64(width) / float64(n)
	for i, rg := range r.Regions {
		x := float64(i) * bw
		if rg.Cells == 0 {
			fmt.Fprintf(w, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"4\" fill=\"#d33\"><title>region %d [%s, %s): empty</title></rect>\n",
				x, height, max(bw-1, 0.5), i, html.EscapeString(rg.StartKey), html.EscapeString(rg.EndKey))
			continue
		}
		h := float64(height-pad) * float64(rg.Bytes) / float64(maxBytes)
		fmt.Fprintf(w, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#4a7\"><title>region %d [%s, %s): %d bytes, %d cells</title></rect>\n",
			x, float64(height)-h, max(bw-1, 0.5), h, i, html.EscapeString(rg.StartKey), html.EscapeString(rg.EndKey), rg.Bytes, rg.Cells)
	}
	fmt.Fprintf(w, "</svg>\n")
}
