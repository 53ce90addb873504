package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// chromium returns the path of a Chromium binary, or skips the test (fails it under CI, where
// .ci/run installs one).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found: install it (Debian/Ubuntu: apt-get install -y chromium) to test the HTML report in a real browser"
	if os.Getenv("CI") == "true" || os.Getenv("HFLOAD_CI") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// runChromium runs headless Chromium on a page with a fresh profile and returns its standard output.
func runChromium(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}

// artifactsDir is where browser tests leave their screenshots: $HFLOAD_ARTIFACTS, else
// $TMPDIR/hfload-artifacts.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HFLOAD_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "hfload-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browserReport analyzes a small data set with every section filled: four regions of which one is
// empty, duplicate row keys and cells, an ascending input, long qualifiers and numbers as text.
func browserReport(t *testing.T) *Report {
	t.Helper()
	families := []string{"details"}
	var batches []*pipeline.CellBatch
	var cells []testCell
	for i := 0; i < 3000; i++ {
		row := fmt.Sprintf("c%05d", i)
		if i >= 2990 {
			row = fmt.Sprintf("c%05d", i-2990) // 10 input rows repeat the first 10 keys
		}
		seq := pipeline.SeqOf(0, int64(i))
		cells = append(cells, testCell{row: row, qual: "customer_name", value: fmt.Sprint("name <", i%97, ">"), ts: 7, seq: seq},
			testCell{row: row, qual: "order_total", value: strconv.Itoa(10_000_000_000 + i), ts: 7, seq: seq})
		if len(cells) >= 400 {
			batches = append(batches, makeBatch(families, cells))
			cells = nil
		}
	}
	batches = append(batches, makeBatch(families, cells))
	splits := partition.Splits{[]byte("c01000"), []byte("c02000"), []byte("d")}
	a, err := New(Options{Families: families, Splits: splits, Table: "orders", SplitsFrom: "--splits splits.txt"})
	if err != nil {
		t.Fatal(err)
	}
	analyzeAll(t, a, batches, false)
	r := a.Report()
	r.SetInput(Input{Files: 1, RowsRead: 3001, RowsRejected: 1, RejectExamples: []string{`{"line":17,"error":"bad <row>"}`}})
	return r
}

// TestHTMLReportInBrowser (issue 23 item 12): the HTML page, rendered by headless Chromium, has the
// chart with its axes and labels, the region table with real start and end keys, the input order, the
// duplicate examples and the sizes, each checked against the JSON report; a screenshot is left in the
// artifacts directory and checked to be a drawn page.
func TestHTMLReportInBrowser(t *testing.T) {
	bin := chromium(t)
	r := browserReport(t)
	dir := t.TempDir()
	var js, page bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	var want Report
	if err := json.Unmarshal(js.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	if want.Duplicates.Rows != 10 || want.RegionSkew.Empty != 1 || len(want.Regions) != 4 {
		t.Fatalf("test data: duplicates %+v, regions %+v", want.Duplicates, want.RegionSkew)
	}
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	dom, err := html.Parse(bytes.NewReader(runChromium(t, bin, path, "--dump-dom")))
	if err != nil {
		t.Fatal(err)
	}
	byID := func(id string) *html.Node {
		n := find(dom, func(n *html.Node) bool { return attr(n, "id") == id })
		if n == nil {
			t.Fatalf("the rendered page has no #%s", id)
		}
		return n
	}
	// Summary figures.
	for key, v := range map[string]string{"rows": fmt.Sprint(want.Rows), "cells": fmt.Sprint(want.Cells),
		"duplicate-rows": fmt.Sprint(want.Duplicates.Rows), "duplicate-cells": fmt.Sprint(want.Duplicates.Cells),
		"regions": fmt.Sprintf("%d (%d)", len(want.Regions), want.RegionSkew.Empty)} {
		if got := text(byID("summary-" + key)); got != v {
			t.Errorf("summary %s: %q, JSON says %q", key, got, v)
		}
	}
	// The chart: one bar per region with the JSON's bytes, y ticks, x labels and both axis titles.
	chart := byID("region-chart")
	bars := findAll(chart, func(n *html.Node) bool { return n.Data == "rect" && strings.Contains(attr(n, "class"), "bar") })
	if len(bars) != len(want.Regions) {
		t.Fatalf("%d bars for %d regions", len(bars), len(want.Regions))
	}
	for i, b := range bars {
		if attr(b, "data-bytes") != fmt.Sprint(want.Regions[i].Bytes) || (want.Regions[i].Cells == 0) != strings.Contains(attr(b, "class"), "empty") {
			t.Errorf("bar %d: class %q bytes %s, JSON region %+v", i, attr(b, "class"), attr(b, "data-bytes"), want.Regions[i])
		}
	}
	classed := func(root *html.Node, cls string) []string {
		var out []string
		for _, n := range findAll(root, func(n *html.Node) bool { return strings.Contains(" "+attr(n, "class")+" ", " "+cls+" ") }) {
			out = append(out, text(n))
		}
		return out
	}
	if y := classed(chart, "y-tick"); len(y) < 3 || y[0] != "0 B" {
		t.Errorf("y-axis ticks %q", y)
	}
	if x := classed(chart, "x-tick"); len(x) != 4 || x[3] != "3" {
		t.Errorf("x-axis labels %q", x)
	}
	if titles := classed(chart, "axis-title"); len(titles) != 2 || !strings.Contains(titles[0], "bytes") || !strings.Contains(titles[1], "region") {
		t.Errorf("axis titles %q", titles)
	}
	// The region table: real keys, the table edges named.
	rows := findAll(byID("region-table"), func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-region") != "" })
	if len(rows) != len(want.Regions) {
		t.Fatalf("%d table rows for %d regions", len(rows), len(want.Regions))
	}
	for i, tr := range rows {
		start, end := classed(tr, "start-key"), classed(tr, "end-key")
		ws, we := orEmpty(want.Regions[i].StartKey, "(table start)"), orEmpty(want.Regions[i].EndKey, "(table end)")
		if len(start) != 1 || len(end) != 1 || start[0] != ws || end[0] != we {
			t.Errorf("table row %d: start %q end %q, JSON %q %q", i, start, end, ws, we)
		}
	}
	// Input order and duplicates.
	if got := attr(byID("order"), "data-ascending-fraction"); got != fmt.Sprint(want.Order.AscendingFraction) ||
		!strings.Contains(text(byID("order")), fmt.Sprintf("%.1f%%", 100*want.Order.AscendingFraction)) {
		t.Errorf("order section %q, JSON %v", got, want.Order)
	}
	exRows := findAll(byID("duplicate-examples"), func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-kind") != "" })
	if len(exRows) != len(want.Duplicates.Examples) || len(exRows) == 0 {
		t.Fatalf("%d example rows, JSON has %d", len(exRows), len(want.Duplicates.Examples))
	}
	for i, tr := range exRows {
		e := want.Duplicates.Examples[i]
		key := e.Row
		if e.Kind == "cell" {
			key = e.Cell
		}
		occ := fmt.Sprintf("%d:%d", e.Occurrences[0].File, e.Occurrences[0].Row)
		if s := text(tr); !strings.Contains(s, key) || !strings.Contains(s, occ) {
			t.Errorf("example row %d %q, JSON %+v", i, s, e)
		}
	}
	// Sizes: five parts; warnings: one item per JSON warning; the reject example is escaped text.
	if parts := findAll(byID("size-chart"), func(n *html.Node) bool { return attr(n, "class") == "size-part" }); len(parts) != 5 {
		t.Errorf("%d size parts", len(parts))
	}
	if ws := findAll(byID("warnings"), func(n *html.Node) bool { return attr(n, "class") == "warning" }); len(ws) != len(want.Warnings) {
		t.Errorf("%d warnings shown, JSON has %d", len(ws), len(want.Warnings))
	}
	if !strings.Contains(text(byID("input")), "1 rejected") || !strings.Contains(text(dom), `"bad <row>"`) {
		t.Errorf("input section %q", text(byID("input")))
	}

	// Screenshot: a drawn page (bars in their green, empty-region red, not a blank image).
	shot := filepath.Join(artifactsDir(t), "analyze-report.png")
	runChromium(t, bin, path, "--screenshot="+shot, "--window-size=1200,1600", "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	var green, red int
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y += 2 {
		for x := bnd.Min.X; x < bnd.Max.X; x += 2 {
			r8, g8, b8, _ := img.At(x, y).RGBA()
			r8, g8, b8 = r8>>8, g8>>8, b8>>8
			switch {
			case r8 < 0x60 && g8 > 0x90 && g8 < 0xc0 && b8 > 0x60 && b8 < 0x90: // #4a7
				green++
			case r8 > 0xc0 && g8 < 0x50 && b8 < 0x50: // #d33
				red++
			}
		}
	}
	if bnd.Dx() != 1200 || green < 500 || red < 5 {
		t.Errorf("screenshot %s: %v, %d green and %d red sample pixels", shot, bnd, green, red)
	}
	t.Logf("screenshot: %s (%d green, %d red sample pixels)", shot, green, red)
}

func orEmpty(k, edge string) string {
	if k == "" {
		return edge
	}
	return k
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(sb.String())
}

func findAll(root *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

func find(root *html.Node, match func(*html.Node) bool) *html.Node {
	if all := findAll(root, match); len(all) > 0 {
		return all[0]
	}
	return nil
}
