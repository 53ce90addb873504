package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

var fams = []string{"d"}

// addConcurrently feeds the batches from 3 goroutines in a shuffled order, as mapping workers would.
func addConcurrently(t *testing.T, a *Analyzer, batches []*pipeline.CellBatch) {
	t.Helper()
	feedConcurrently(t, a.Add, batches)
}

func feedConcurrently(t *testing.T, fn func(*pipeline.CellBatch) error, batches []*pipeline.CellBatch) {
	t.Helper()
	order := rand.New(rand.NewSource(3)).Perm(len(batches))
	var wg sync.WaitGroup
	errs := make(chan error, len(batches))
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(order); i += 3 {
				if err := fn(batches[order[i]]); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestMonotonicLead: keys led by an increasing timestamp raise monotonic_lead even when the batches
// arrive out of order; random keys do not.
func TestMonotonicLead(t *testing.T) {
	var rows []string
	ts := int64(1_700_000_000_000)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 5000; i++ {
		ts += int64(rng.Intn(1000))
		rows = append(rows, fmt.Sprintf("%013d|user%04d", ts, rng.Intn(10000)))
	}
	a, err := New(Options{Families: fams})
	if err != nil {
		t.Fatal(err)
	}
	addConcurrently(t, a, rowsToBatches(fams, rows, 0, 256))
	r := a.Report()
	// Only rows with an equal timestamp and a smaller user break the order: nearly all pairs ascend.
	if r.Order.Pairs != 4999 || r.Order.AscendingFraction < 0.99 {
		t.Fatalf("order %+v", r.Order)
	}
	if !hasWarning(r, "monotonic_lead") {
		t.Fatalf("no monotonic_lead warning: %+v", r.Warnings)
	}

	var random []string
	for i := 0; i < 5000; i++ {
		random = append(random, fmt.Sprintf("%08x|%d", rng.Uint32(), i))
	}
	b, _ := New(Options{Families: fams})
	addConcurrently(t, b, rowsToBatches(fams, random, 0, 256))
	rb := b.Report()
	if rb.Order.Pairs != 4999 || math.Abs(rb.Order.AscendingFraction-0.5) > 0.05 || hasWarning(rb, "monotonic_lead") {
		t.Fatalf("random keys: order %+v, warnings %+v", rb.Order, rb.Warnings)
	}
}

// TestHexTrap: hex keys under HBase-style byte-uniform splits leave 14 of 16 regions empty; hex-aware
// uniform splits and the suggested splits spread them.
func TestHexTrap(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var rows []string
	for i := 0; i < 8000; i++ {
		rows = append(rows, fmt.Sprintf("%08x", rng.Uint32()))
	}
	byteSplits, err := partition.Uniform(16, "bytes") // \x10, \x20, ... \xF0 like HBase's UniformSplit
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Families: fams, Splits: byteSplits})
	if err != nil {
		t.Fatal(err)
	}
	addConcurrently(t, a, rowsToBatches(fams, rows, 0, 500))
	r := a.Report()
	if len(r.Regions) != 16 || r.RegionSkew.Empty != 14 {
		t.Fatalf("regions %+v", r.RegionSkew)
	}
	// '0'-'9' (0x30-0x39) fall in [\x30, \x40), 'a'-'f' (0x61-0x66) in [\x60, \x70).
	if r.Regions[3].StartKey != "0" || r.Regions[3].Cells == 0 || r.Regions[6].StartKey != "`" || r.Regions[6].Cells == 0 ||
		r.Regions[3].Cells+r.Regions[6].Cells != 8000 {
		t.Fatalf("regions %+v", r.Regions)
	}
	if !hasWarning(r, "empty_regions") || !hasWarning(r, "skewed_regions") {
		t.Fatalf("warnings %+v", r.Warnings)
	}
	// The suggested splits, for the same 16 regions, leave none empty and stay balanced.
	sugg, err := partition.ParseSplits(strings.NewReader(strings.Join(r.SuggestedSplits, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if r.SuggestedRegions != 16 || len(sugg) != 15 {
		t.Fatalf("suggested %d regions: %q", r.SuggestedRegions, r.SuggestedSplits)
	}
	b, _ := New(Options{Families: fams, Splits: sugg})
	addConcurrently(t, b, rowsToBatches(fams, rows, 0, 500))
	rb := b.Report()
	if rb.RegionSkew.Empty != 0 || rb.RegionSkew.LargestSmallestRatio > 1.05 || hasWarning(rb, "empty_regions") || hasWarning(rb, "skewed_regions") {
		t.Fatalf("suggested splits: %+v, warnings %+v", rb.RegionSkew, rb.Warnings)
	}
	if !strings.HasPrefix(r.CreateCommand, "create 'TABLE', 'd', SPLITS => ['") {
		t.Fatalf("create command %s", r.CreateCommand)
	}
	// Hex-aware uniform splits: nothing empty either.
	hexSplits, _ := partition.Uniform(16, "hex")
	c, _ := New(Options{Families: fams, Splits: hexSplits})
	addConcurrently(t, c, rowsToBatches(fams, rows, 0, 500))
	if rc := c.Report(); rc.RegionSkew.Empty != 0 || hasWarning(rc, "empty_regions") {
		t.Fatalf("hex splits: %+v", rc.RegionSkew)
	}
}

// TestDuplicates: 5,000 of 100,000 input rows reuse the key of an earlier row (from another file, so
// another Seq). The counts are exact, and so are the examples' positions; the first 90,000 rows alone
// (unique keys) give zero, no example and no second pass.
func TestDuplicates(t *testing.T) {
	const nRows, nDup = 100_000, 5_000
	rng := rand.New(rand.NewSource(4))
	keys := make([]string, 0, nRows)
	truth := map[string][]uint64{}
	var batches []*pipeline.CellBatch
	var cells []testCell
	flush := func() {
		if len(cells) > 0 {
			batches = append(batches, makeBatch(fams, cells))
			cells = nil
		}
	}
	for i := 0; i < nRows; i++ {
		var k string
		file := 0
		if i >= nRows-nDup {
			k = keys[rng.Intn(nRows-nDup)] // unique among the first rows, reused by chance more than once
			file = 1
		} else {
			k = fmt.Sprintf("cust%08d", rng.Intn(1<<30))
			for truth[k] != nil { // make the first nRows-nDup keys unique
				k = fmt.Sprintf("cust%08d", rng.Intn(1<<30))
			}
		}
		keys = append(keys, k)
		seq := pipeline.SeqOf(file, int64(i))
		truth[k] = append(truth[k], seq)
		cells = append(cells, testCell{row: k, qual: "a", value: "x", ts: 5, seq: seq},
			testCell{row: k, qual: "b", value: "y", ts: 5, seq: seq})
		if len(cells) >= 1000 {
			flush()
		}
	}
	flush()
	a, err := New(Options{Families: fams})
	if err != nil {
		t.Fatal(err)
	}
	analyzeAll(t, a, batches, true)
	r := a.Report()
	d := r.Duplicates
	if r.Rows != nRows || r.Cells != 2*nRows {
		t.Fatalf("rows %d cells %d", r.Rows, r.Cells)
	}
	if d.Rows != nDup || d.Cells != 2*nDup || !d.Confirmed || d.Partial || d.SuspectedRows != nDup || d.EstimatedRows != nDup {
		t.Errorf("duplicates %+v, want %d rows, %d cells", d, nDup, 2*nDup)
	}
	// Examples: the first 10 duplicated keys by position, each with the input rows that produced it.
	var rowEx []DuplicateExample
	for _, e := range d.Examples {
		if e.Kind == "row" {
			rowEx = append(rowEx, e)
		}
	}
	if len(rowEx) != 10 || len(d.Examples) != 20 {
		t.Fatalf("%d row examples of %d: %+v", len(rowEx), len(d.Examples), d.Examples)
	}
	for _, e := range rowEx {
		seqs := truth[e.Row]
		if !e.Confirmed || len(e.Occurrences) != min(len(seqs), 3) || len(seqs) < 2 {
			t.Fatalf("example %+v, truth %v", e, seqs)
		}
		for i, o := range e.Occurrences {
			if pipeline.SeqOf(o.File, o.Row) != seqs[i] {
				t.Fatalf("example %+v, truth %v", e, seqs)
			}
		}
	}
	if !hasWarning(r, "duplicate_keys") || !hasWarning(r, "duplicate_cells") {
		t.Fatalf("warnings %+v", r.Warnings)
	}

	// Without duplicates: zero, nothing suspected, no second pass, no warning.
	b, _ := New(Options{Families: fams})
	for _, bt := range batches[:len(batches)*9/10] { // the first 90,000 rows are unique
		if err := b.Add(bt); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.Suspects(); n != 0 {
		t.Fatalf("%d suspects among unique keys", n)
	}
	rb := b.Report()
	if d := rb.Duplicates; d.Rows != 0 || d.Cells != 0 || !d.Confirmed || len(d.Examples) != 0 || len(rb.Warnings) != 0 {
		t.Fatalf("unique keys: %+v, warnings %+v", d, rb.Warnings)
	}
}

// TestFingerprintCollisionIsNotADuplicate: two distinct keys that share a fingerprint (forced here) are
// suspects, and the second pass clears them.
func TestFingerprintCollisionIsNotADuplicate(t *testing.T) {
	a, _ := New(Options{Families: fams})
	batches := rowsToBatches(fams, []string{"k1", "k2", "k3"}, 0, 10)
	if err := a.Add(batches[0]); err != nil {
		t.Fatal(err)
	}
	a.dups.fps = append(a.dups.fps, hash64([]byte("k2"))) // as if another key had k2's fingerprint
	if n := a.Suspects(); n != 1 {
		t.Fatalf("%d suspects", n)
	}
	if r := a.Report(); r.Duplicates.Confirmed || r.Duplicates.Rows != 1 || !hasWarning(r, "duplicate_keys_unconfirmed") {
		t.Fatalf("without the second pass: %+v %+v", r.Duplicates, r.Warnings)
	}
	if err := a.Confirm(batches[0]); err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	if d := r.Duplicates; !d.Confirmed || d.Rows != 0 || d.Cells != 0 || len(d.Examples) != 0 || len(r.Warnings) != 0 {
		t.Fatalf("after the second pass: %+v %+v", d, r.Warnings)
	}
}

// TestConfirmBytesPartial: a memory limit below the suspected keys makes the counts lower bounds, said so.
func TestConfirmBytesPartial(t *testing.T) {
	var rows []string
	for i := 0; i < 100; i++ {
		rows = append(rows, fmt.Sprintf("key%03d", i), fmt.Sprintf("key%03d", i))
	}
	a, _ := New(Options{Families: fams, ConfirmBytes: 1000})
	analyzeAll(t, a, rowsToBatches(fams, rows, 0, 50), false)
	r := a.Report()
	if d := r.Duplicates; !d.Partial || d.Rows == 0 || d.Rows >= 100 || d.SuspectedRows != 100 || !hasWarning(r, "duplicate_count_partial") {
		t.Fatalf("%+v %+v", d, r.Warnings)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestSameRowSeveralCellsIsNotDuplicate: many cells of one input row share its key without being
// duplicates; the same key from two input rows is one.
func TestSameRowSeveralCellsIsNotDuplicate(t *testing.T) {
	a, _ := New(Options{Families: []string{"d", "e"}})
	var cells []testCell
	for q := 0; q < 50; q++ {
		cells = append(cells, testCell{row: "k", qual: fmt.Sprint(q), family: uint16(q % 2), value: "v", seq: 7})
	}
	if err := a.Add(makeBatch([]string{"d", "e"}, cells)); err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	if r.Rows != 1 || r.Cells != 50 || r.Duplicates.Rows != 0 || r.Duplicates.Cells != 0 || len(r.Duplicates.Examples) != 0 {
		t.Fatalf("%+v", r.Duplicates)
	}
	b, _ := New(Options{Families: []string{"d", "e"}})
	analyzeAll(t, b, []*pipeline.CellBatch{makeBatch([]string{"d", "e"}, cells),
		makeBatch([]string{"d", "e"}, []testCell{{row: "k", qual: "0", value: "w", seq: pipeline.SeqOf(1, 3)}})}, false)
	r = b.Report()
	d := r.Duplicates
	if r.Rows != 2 || d.Rows != 1 || d.Cells != 1 || len(d.Examples) != 2 {
		t.Fatalf("%+v", d)
	}
	if e := d.Examples[0]; e.Kind != "row" || !e.Confirmed || e.Row != "k" ||
		fmt.Sprint(e.Occurrences) != "[{0 7} {1 3}]" {
		t.Fatalf("row example %+v", e)
	}
	if e := d.Examples[1]; e.Kind != "cell" || !e.Confirmed || e.Cell != "k/d:0/0/Put" {
		t.Fatalf("cell example %+v", e)
	}
}

// TestSizes: verbose family and qualifier names and numbers stored as text; every number is exact.
func TestSizes(t *testing.T) {
	families := []string{"details"}
	var cells []testCell
	for i := 0; i < 100; i++ {
		row := fmt.Sprintf("row-%03d", i) // 7 bytes
		cells = append(cells,
			testCell{row: row, qual: "customer_name", value: "alice", ts: 1, seq: uint64(i)},     // 13 / 5
			testCell{row: row, qual: "order_total", value: "12345678901", ts: 1, seq: uint64(i)}) // 11 / 11
	}
	a, err := New(Options{Families: families})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Add(makeBatch(families, cells)); err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	z := r.Sizes
	// Keys: 7+7+13+12 = 39 and 7+7+11+12 = 37 bytes; values 5 and 11; records add 8 bytes each.
	want := Sizes{
		AvgRowKey: 7, AvgFamily: 7, AvgQualifier: 12, AvgValue: 8,
		CoordinateBytesPerValueByte: 4.75, // 7600 / 1600
		KeyBytes:                    7600, ValueBytes: 1600,
		FamilySavings:    1200,  // 200 cells × (7-1)
		QualifierSavings: 2000,  // 100 × (13-2) + 100 × (11-2)
		SavingsShare:     0.296, // 3200 / 10800
		NumericValues:    100,
		NumericSavings:   300, // 100 × (11-8)
	}
	if z != want {
		t.Fatalf("sizes\n got %+v\nwant %+v", z, want)
	}
	if r.Bytes != 10800 || r.Rows != 100 || r.Cells != 200 {
		t.Fatalf("rows %d cells %d bytes %d", r.Rows, r.Cells, r.Bytes)
	}
	if !hasWarning(r, "long_names") || !hasWarning(r, "numbers_as_text") {
		t.Fatalf("warnings %+v", r.Warnings)
	}
	var found bool
	for _, w := range r.Warnings {
		if w.Code == "numbers_as_text" {
			found = strings.Contains(w.Message, "details:order_total (100 values)")
		}
	}
	if !found {
		t.Fatalf("numbers_as_text does not name the column: %+v", r.Warnings)
	}
	wantCols := []Column{
		{Family: "details", Qualifier: "order_total", Cells: 100, ValueBytes: 1100, NumericValues: 100, NumericSavings: 300},
		{Family: "details", Qualifier: "customer_name", Cells: 100, ValueBytes: 500},
	}
	if fmt.Sprint(r.Columns) != fmt.Sprint(wantCols) {
		t.Fatalf("columns %+v", r.Columns)
	}

	// Short names, binary values: no size warnings.
	b, _ := New(Options{Families: []string{"d"}})
	var short []testCell
	for i := 0; i < 100; i++ {
		short = append(short, testCell{row: fmt.Sprintf("row-%03d", i), qual: "n", value: "\x00\x00\x00\x00\x00\x00\x30\x39", seq: uint64(i)})
	}
	if err := b.Add(makeBatch([]string{"d"}, short)); err != nil {
		t.Fatal(err)
	}
	if rb := b.Report(); hasWarning(rb, "long_names") || hasWarning(rb, "numbers_as_text") || rb.Sizes.FamilySavings != 0 || rb.Sizes.QualifierSavings != 0 {
		t.Fatalf("short names: %+v %+v", rb.Sizes, rb.Warnings)
	}
}

func TestIsIntegerText(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "7": true, "-7": true, "12345678901": true, "9223372036854775807": true,
		"-9223372036854775808": true, "9223372036854775808": false, "-9223372036854775809": false,
		"": false, "-": false, "007": false, "-0": false, "1.5": false, "1e3": false, " 1": false, "+1": false,
		"12345678901234567890": false,
	} {
		if got := isIntegerText([]byte(s)); got != want {
			t.Errorf("isIntegerText(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestAddErrors(t *testing.T) {
	a, _ := New(Options{Families: fams})
	good := makeBatch(fams, []testCell{{row: "r", qual: "q", value: "v"}})
	bad := &pipeline.CellBatch{Buf: good.Buf[:len(good.Buf)-1], Records: good.Records, Dict: good.Dict}
	if err := a.Add(bad); err == nil || !strings.Contains(err.Error(), "outside the buffer") {
		t.Errorf("truncated buffer: %v", err)
	}
	short := &pipeline.CellBatch{Buf: good.Buf, Records: []pipeline.RecordRef{{Off: 0, Len: 10, Cells: 1}}, Dict: good.Dict}
	if err := a.Add(short); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("short record: %v", err)
	}
	fam := makeBatch([]string{"d", "e"}, []testCell{{row: "r", qual: "q", family: 1}})
	if err := a.Add(fam); err == nil || !strings.Contains(err.Error(), "family index 1") {
		t.Errorf("family index: %v", err)
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New without families: no error")
	}
	if _, err := New(Options{Families: fams, ConfirmBytes: -1}); err == nil {
		t.Error("New with negative ConfirmBytes: no error")
	}
	if _, err := New(Options{Families: fams, Splits: partition.Splits{[]byte("b"), []byte("a")}}); err == nil {
		t.Error("New with unsorted splits: no error")
	}
}

// TestReportJSONContract pins the JSON field names other tools rely on, and the text form's sections.
func TestReportJSONContract(t *testing.T) {
	a, _ := New(Options{Families: fams, Splits: partition.Splits{[]byte("\x01m")}, Table: "orders", SuggestRegions: 2})
	var cells []testCell
	for i := 0; i < 10; i++ {
		cells = append(cells, testCell{row: fmt.Sprintf("\x00k%d", i), qual: "q", value: "v", seq: uint64(i)})
	}
	if err := a.Add(makeBatch(fams, cells)); err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rows", "cells", "duplicates", "regions", "sizes", "suggested_splits", "warnings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("top-level %q missing", k)
		}
	}
	dup := m["duplicates"].(map[string]any)
	for _, k := range []string{"estimated_rows", "estimated_cells", "false_positive_rate", "examples"} {
		if _, ok := dup[k]; !ok {
			t.Errorf("duplicates.%s missing", k)
		}
	}
	sizes := m["sizes"].(map[string]any)
	for _, k := range []string{"avg_row_key", "avg_family", "avg_qualifier", "avg_value", "coordinate_bytes_per_value_byte"} {
		if _, ok := sizes[k]; !ok {
			t.Errorf("sizes.%s missing", k)
		}
	}
	regions := m["regions"].([]any)
	r0 := regions[0].(map[string]any)
	r1 := regions[1].(map[string]any)
	if r0["start_key"] != "" || r0["end_key"] != `\x01m` || r1["start_key"] != `\x01m` || r1["end_key"] != "" ||
		r0["cells"].(float64) != 10 || r0["bytes"] == nil {
		t.Errorf("regions %v", regions)
	}
	if _, ok := m["warnings"].([]any); !ok {
		t.Errorf("warnings is not an array: %v", m["warnings"])
	}
	if s := m["suggested_splits"].([]any); len(s) != 1 || !strings.HasPrefix(s[0].(string), `\x00k`) {
		t.Errorf("suggested_splits %v", s)
	}
	if !strings.HasPrefix(r.CreateCommand, `create 'orders', 'd', SPLITS => ['\x00k`) {
		t.Errorf("create command %s", r.CreateCommand)
	}
	var page bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	// One bar per region: region 0 with data, region 1 empty (marked), keys escaped.
	if n := strings.Count(page.String(), "<rect class=\"bar"); n != 2 ||
		!strings.Contains(page.String(), "region 1 [\\x01m, table end): 0 bytes, 0 cells (empty)") ||
		!strings.Contains(page.String(), "create &#39;orders&#39;") {
		t.Errorf("HTML report:\n%s", page.String())
	}
	var txt bytes.Buffer
	if err := r.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"rows 10, cells 10", "regions (2, 1 empty", "suggested split points for 2 regions", "create 'orders'"} {
		if !strings.Contains(txt.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, txt.String())
		}
	}
}

// BenchmarkAdd measures analysis throughput on batches of 1000 rows × 4 cells (cells/s is reported).
func BenchmarkAdd(b *testing.B) {
	families := []string{"d"}
	rng := rand.New(rand.NewSource(1))
	var batches []*pipeline.CellBatch
	for bi := 0; bi < 16; bi++ {
		var cells []testCell
		for i := 0; i < 1000; i++ {
			row := fmt.Sprintf("%08x|cust%06d", rng.Uint32(), i)
			seq := pipeline.SeqOf(0, int64(bi*1000+i))
			for _, q := range []string{"name", "city", "total", "ts"} {
				cells = append(cells, testCell{row: row, qual: q, value: fmt.Sprint(rng.Intn(1 << 20)), ts: 1, seq: seq})
			}
		}
		batches = append(batches, makeBatch(families, cells))
	}
	splits, _ := partition.Uniform(64, "hex")
	a, err := New(Options{Families: families, Splits: splits})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if err := a.Add(batches[i%len(batches)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
	b.ReportMetric(float64(b.N)*4000/b.Elapsed().Seconds(), "cells/s")
}

// TestOrderIndependentReport: the same batches in two different orders (one sequential, one concurrent)
// give byte-identical reports, duplicate counts and examples included.
func TestOrderIndependentReport(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	var rows []string
	for i := 0; i < 6000; i++ {
		rows = append(rows, fmt.Sprintf("%05x", rng.Intn(1<<20))) // some keys repeat by chance
	}
	batches := rowsToBatches(fams, rows, 0, 300)
	splits, _ := partition.Uniform(8, "hex")
	report := func(concurrent bool) []byte {
		a, _ := New(Options{Families: fams, Splits: splits, SuggestRegions: 5, MaxExamples: 3})
		analyzeAll(t, a, batches, concurrent)
		r := a.Report()
		if r.Duplicates.Rows == 0 {
			t.Fatal("no duplicates: test too weak")
		}
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	seq, conc := report(false), report(true)
	if !bytes.Equal(seq, conc) {
		t.Fatalf("reports differ:\n%s\n%s", seq, conc)
	}
}

// analyzeAll runs both passes over batches: Add, then Confirm if there are suspects, each either in
// order or concurrently in a shuffled order.
func analyzeAll(t *testing.T, a *Analyzer, batches []*pipeline.CellBatch, concurrent bool) {
	t.Helper()
	for pass, fn := range []func(*pipeline.CellBatch) error{a.Add, a.Confirm} {
		if pass == 1 && a.Suspects() == 0 {
			return
		}
		if concurrent {
			feedConcurrently(t, fn, batches)
			continue
		}
		for _, b := range batches {
			if err := fn(b); err != nil {
				t.Fatal(err)
			}
		}
	}
}
