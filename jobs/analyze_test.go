package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/analyze"
	"github.com/hfload/hfload/internal/gen"
)

const ordersColumns = "HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment"

var analyzeNow = time.UnixMilli(1700000000000)

// genFile writes a generated dataset (with a header row for CSV) into dir.
func genAnalyzeFile(t *testing.T, dir, name string, opts gen.Options) string {
	t.Helper()
	var buf bytes.Buffer
	opts.Header = true
	if _, err := gen.Write(&buf, opts); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runAnalyze(t *testing.T, job *Job, opts AnalyzeOptions) *analyze.Report {
	t.Helper()
	opts.Now = analyzeNow
	r, err := Analyze(context.Background(), job, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func warning(r *analyze.Report, code string) *analyze.Warning {
	for i := range r.Warnings {
		if r.Warnings[i].Code == code {
			return &r.Warnings[i]
		}
	}
	return nil
}

func codes(r *analyze.Report) []string {
	var out []string
	for _, w := range r.Warnings {
		out = append(out, w.Code)
	}
	return out
}

// Orders keyed by the increasing order_id: every consecutive pair ascends → monotonic_lead. The same
// data keyed by a salt byte and pre-split per salt bucket spreads evenly, without the warning.
func TestAnalyzeMonotonicLeadAndSalt(t *testing.T) {
	dir := t.TempDir()
	in := genAnalyzeFile(t, dir, "orders.csv", gen.Options{Dataset: "orders", Rows: 3000, Seed: 1})

	// No out, no table: analysis does not need them.
	job := &Job{Input: StringList{in}, Header: true, Columns: ordersColumns}
	r := runAnalyze(t, job, AnalyzeOptions{})
	if job.Out != "" || job.Table != "" {
		t.Errorf("Analyze changed the caller's job: out %q table %q", job.Out, job.Table)
	}
	if err := job.Validate(); err == nil || !strings.Contains(err.Error(), "out: required") {
		t.Errorf("run validation must still require out, got %v", err)
	}
	if r.Rows != 3000 || r.Input.RowsRead != 3000 || r.Input.Sampled || r.Input.Files != 1 {
		t.Errorf("rows %d, input %+v", r.Rows, r.Input)
	}
	if r.Order.Pairs != 2999 || r.Order.AscendingPairs != 2999 {
		t.Errorf("order %+v, want 2999 ascending pairs of 2999", r.Order)
	}
	if warning(r, "monotonic_lead") == nil {
		t.Errorf("no monotonic_lead warning: %v", codes(r))
	}

	jobYAML := fmt.Sprintf(`input: %s
header: true
split_by_salt: 16
mapping:
  columns:
    - {name: order_id, type: long}
    - {name: status, cell: "d:status"}
  rowkey: [salt(16), order_id]
  timestamp: {value: 1700000000000}
`, in)
	jf := writeFile(t, dir, "salted.yaml", jobYAML)
	sj, err := LoadJob(jf, func(string) (string, bool) { return "", false }, nil)
	if err != nil {
		t.Fatal(err)
	}
	r = runAnalyze(t, sj, AnalyzeOptions{})
	if warning(r, "monotonic_lead") != nil {
		t.Errorf("salted key still monotonic: %+v", r.Order)
	}
	// Phoenix's salt byte of consecutive ids steps through the buckets (the hash of the next id differs
	// by one), so consecutive keys mostly descend: no ascending run, writes rotate over the regions.
	if f := r.Order.AscendingFraction; f > 0.5 {
		t.Errorf("salted key ascending fraction %.3f, want well below 0.9", f)
	}
	if len(r.Regions) != 16 || r.RegionSkew.Empty != 0 {
		t.Errorf("salt splits: %d regions, %d empty; want 16, 0", len(r.Regions), r.RegionSkew.Empty)
	}
	// A sample keeps the CSV header, so columns mapped by name still bind.
	// (The one cell per row is status, ~2% NULL: such rows produce no cell.)
	if rs := runAnalyze(t, sj, AnalyzeOptions{Sample: 500}); rs.Input.RowsRead != 500 || !rs.Input.Sampled ||
		rs.Rows != 500-rs.Input.NullsSkipped || rs.Rows < 450 {
		t.Errorf("salted sample 500: rows %d cells %d input %+v", rs.Rows, rs.Cells, rs.Input)
	}
	var sum int64
	for _, rg := range r.Regions {
		sum += rg.Cells
		if rg.Cells < 3000/16/2 { // 187 rows per bucket on average
			t.Errorf("salt region [%s, %s) has only %d cells", rg.StartKey, rg.EndKey, rg.Cells)
		}
	}
	if sum != r.Cells {
		t.Errorf("region cells sum to %d, report has %d", sum, r.Cells)
	}
}

// hexKeys returns n distinct pseudo-random 16-digit hex row keys.
func hexKeys(n int) []string {
	keys := make([]string, n)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range keys {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		keys[i] = fmt.Sprintf("%016x", x)
	}
	return keys
}

// Hex text keys under byte-uniform split points (like HBase's Bytes.split from \x00 to \xff): only the
// regions holding '0'..'9' (0x30-0x39) and 'a'..'f' (0x61-0x66) get cells.
func TestAnalyzeHexKeysUnderByteSplits(t *testing.T) {
	dir := t.TempDir()
	var csv strings.Builder
	for i, k := range hexKeys(2000) {
		fmt.Fprintf(&csv, "%s,v%d\n", k, i)
	}
	in := writeFile(t, dir, "hex.csv", csv.String())
	var splits strings.Builder
	for b := 0x10; b <= 0xf0; b += 0x10 {
		fmt.Fprintf(&splits, "\\x%02X\n", b)
	}
	sf := writeFile(t, dir, "splits.txt", splits.String())

	job := &Job{Input: StringList{in}, Columns: "HBASE_ROW_KEY,d:v", Splits: sf}
	r := runAnalyze(t, job, AnalyzeOptions{})
	if len(r.Regions) != 16 || r.RegionSkew.Empty != 14 {
		t.Fatalf("%d regions, %d empty; want 16 regions, 14 empty", len(r.Regions), r.RegionSkew.Empty)
	}
	if r.Regions[3].StartKey != "0" || r.Regions[6].StartKey != "`" || // toStringBinary of \x30, \x60
		r.Regions[3].Cells+r.Regions[6].Cells != 2000 || r.Regions[3].Cells == 0 || r.Regions[6].Cells == 0 {
		t.Errorf("non-empty regions: %+v and %+v", r.Regions[3], r.Regions[6])
	}
	w := warning(r, "empty_regions")
	if w == nil || !strings.Contains(w.Message, "--split-uniform N --keyspace hex") || !strings.Contains(w.Message, "14 of 16") {
		t.Errorf("empty_regions warning: %+v", w)
	}
	// The suggested split points default to the regions in force and come from the data.
	if r.SuggestedRegions != 16 || len(r.SuggestedSplits) != 15 {
		t.Errorf("suggested %d regions, %d splits", r.SuggestedRegions, len(r.SuggestedSplits))
	}

	// The fix the warning proposes leaves no region empty.
	job = &Job{Input: StringList{in}, Columns: "HBASE_ROW_KEY,d:v", SplitUniform: 16, Keyspace: "hex"}
	r = runAnalyze(t, job, AnalyzeOptions{})
	if len(r.Regions) != 16 || r.RegionSkew.Empty != 0 || warning(r, "empty_regions") != nil {
		t.Errorf("hex keyspace: %d regions, %d empty, warnings %v", len(r.Regions), r.RegionSkew.Empty, codes(r))
	}

	// split_sample N: one region in force, suggested splits for N; --regions overrides.
	job = &Job{Input: StringList{in}, Columns: "HBASE_ROW_KEY,d:v", SplitSample: 8}
	r = runAnalyze(t, job, AnalyzeOptions{})
	if len(r.Regions) != 1 || r.SuggestedRegions != 8 || len(r.SuggestedSplits) != 7 {
		t.Errorf("split_sample 8: %d regions in force, suggested %d (%d splits)", len(r.Regions), r.SuggestedRegions, len(r.SuggestedSplits))
	}
	r = runAnalyze(t, job, AnalyzeOptions{Regions: 3})
	if r.SuggestedRegions != 3 || len(r.SuggestedSplits) != 2 || !strings.Contains(r.CreateCommand, "SPLITS =>") {
		t.Errorf("--regions 3: suggested %d (%v) %q", r.SuggestedRegions, r.SuggestedSplits, r.CreateCommand)
	}
}

// 5000 distinct keys plus 500 rows repeating 500 of them: exact counts for row keys (500) and cells
// (2 per row, same timestamp: 1000), with the input rows of the first example.
func TestAnalyzeDuplicatesExact(t *testing.T) {
	dir := t.TempDir()
	keys := hexKeys(5000)
	var csv strings.Builder
	for i, k := range keys {
		fmt.Fprintf(&csv, "%s,a%d,b%d\n", k, i, i)
	}
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&csv, "%s,again%d,b\n", keys[(i*7)%5000], i)
	}
	in := writeFile(t, dir, "dups.csv", csv.String())
	job := &Job{Input: StringList{in}, Columns: "HBASE_ROW_KEY,d:a,d:b", Timestamp: 1700000000000}
	r := runAnalyze(t, job, AnalyzeOptions{})
	d := r.Duplicates
	if d.Rows != 500 || d.Cells != 1000 || !d.Confirmed || d.Partial {
		t.Errorf("duplicates %+v, want 500 rows and 1000 cells", d)
	}
	// The first duplicate by position: keys[0], rows 0 and 5000 of the file.
	if e := d.Examples[0]; e.Kind != "row" || e.Row != keys[0] || fmt.Sprint(e.Occurrences) != "[{0 0} {0 5000}]" {
		t.Errorf("first example %+v", e)
	}
	// --sample: the second pass reads the same first rows only.
	r = runAnalyze(t, job, AnalyzeOptions{Sample: 5100})
	if d := r.Duplicates; d.Rows != 100 || d.Cells != 200 || !r.Input.Sampled {
		t.Errorf("--sample 5100: duplicates %+v, input %+v", d, r.Input)
	}
	if warning(r, "duplicate_keys") == nil || warning(r, "duplicate_cells") == nil {
		t.Errorf("warnings %v", codes(r))
	}

	// Control: the distinct keys alone.
	uniq := writeFile(t, dir, "uniq.csv", strings.Join(strings.SplitAfter(csv.String(), "\n")[:5000], ""))
	job = &Job{Input: StringList{uniq}, Columns: "HBASE_ROW_KEY,d:a,d:b", Timestamp: 1700000000000}
	r = runAnalyze(t, job, AnalyzeOptions{})
	if r.Rows != 5000 || r.Duplicates.Rows != 0 || r.Duplicates.Cells != 0 || warning(r, "duplicate_keys") != nil {
		t.Errorf("unique keys: rows %d, duplicates %+v, warnings %v", r.Rows, r.Duplicates, codes(r))
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// A 7-byte family and 19- and 21-byte qualifiers: the savings of 1-byte families and 2-byte qualifiers
// are exact sums over the cells.
func TestAnalyzeVerboseQualifierSavings(t *testing.T) {
	dir := t.TempDir()
	const rows = 1000
	var csv strings.Builder
	var wantBytes int64
	for i := 0; i < rows; i++ {
		key, v1, v2 := fmt.Sprintf("user%05d", i), fmt.Sprintf("c%d", i), fmt.Sprintf("%d Main Street", i)
		fmt.Fprintf(&csv, "%s,%s,%s\n", key, v1, v2)
		for _, c := range []struct{ q, v string }{{"customer_identifier", v1}, {"shipping_address_line", v2}} {
			keyLen := 2 + len(key) + 1 + len("details") + len(c.q) + 8 + 1
			wantBytes += int64(4 + 4 + keyLen + len(c.v))
		}
	}
	in := writeFile(t, dir, "verbose.csv", csv.String())
	job := &Job{Input: StringList{in},
		Columns: "HBASE_ROW_KEY,details:customer_identifier,details:shipping_address_line"}
	r := runAnalyze(t, job, AnalyzeOptions{})
	z := r.Sizes
	if r.Cells != 2*rows || r.Bytes != wantBytes {
		t.Fatalf("cells %d bytes %d, want %d, %d", r.Cells, r.Bytes, 2*rows, wantBytes)
	}
	if z.FamilySavings != 2*rows*6 || z.QualifierSavings != rows*17+rows*19 {
		t.Errorf("savings family %d qualifier %d, want %d, %d", z.FamilySavings, z.QualifierSavings, 2*rows*6, rows*(17+19))
	}
	wantShare := float64(2*rows*6+rows*(17+19)) / float64(wantBytes)
	if d := z.SavingsShare - wantShare; d > 0.0005 || d < -0.0005 {
		t.Errorf("savings share %.4f, want %.4f", z.SavingsShare, wantShare)
	}
	if z.AvgFamily != 7 || z.AvgQualifier != 20 {
		t.Errorf("avg family %.3f qualifier %.3f, want 7, 20", z.AvgFamily, z.AvgQualifier)
	}
	if w := warning(r, "long_names"); w == nil || !strings.Contains(w.Message, fmt.Sprint(z.QualifierSavings)) {
		t.Errorf("long_names warning: %+v", w)
	}
}

// --sample N reads exactly the first N rows: inside a CSV batch, across files, and in Parquet.
func TestAnalyzeSample(t *testing.T) {
	dir := t.TempDir()
	a := genAnalyzeFile(t, dir, "a.csv", gen.Options{Dataset: "orders", Rows: 5000, Seed: 1})
	b := genAnalyzeFile(t, dir, "b.csv", gen.Options{Dataset: "orders", Rows: 700, Seed: 2})
	job := &Job{Input: StringList{a}, Header: true, Columns: ordersColumns}

	r := runAnalyze(t, job, AnalyzeOptions{Sample: 1000})
	if r.Input.RowsRead != 1000 || r.Rows != 1000 || !r.Input.Sampled || r.Input.SampleLimit != 1000 {
		t.Errorf("sample 1000: rows %d, input %+v", r.Rows, r.Input)
	}
	if r.Order.Pairs != 999 {
		t.Errorf("sample 1000: %d order pairs, want 999", r.Order.Pairs)
	}
	if w := warning(r, "sample"); w == nil || !strings.Contains(w.Message, "first 1000 rows") {
		t.Errorf("sample warning: %+v", w)
	}
	// The filters are sized for the sample and the mapping's cells per row (about 6.4 here), not
	// overfilled into false duplicate findings.
	if d := r.Duplicates; d.CellFilterFPRate > 0.02 || d.RowFilterFPRate > 0.02 || warning(r, "duplicate_cells") != nil {
		t.Errorf("sample 1000: filter fp rates %.3f/%.3f, warnings %v", d.RowFilterFPRate, d.CellFilterFPRate, codes(r))
	}

	// A limit at or beyond the end is not a sample.
	for _, n := range []int64{5000, 9000} {
		r = runAnalyze(t, job, AnalyzeOptions{Sample: n})
		if r.Input.RowsRead != 5000 || r.Input.Sampled || warning(r, "sample") != nil {
			t.Errorf("sample %d of 5000 rows: input %+v, warnings %v", n, r.Input, codes(r))
		}
	}

	// Across files: the second file is cut.
	job = &Job{Input: StringList{b, a}, Header: true, Columns: ordersColumns}
	r = runAnalyze(t, job, AnalyzeOptions{Sample: 1200})
	if r.Input.RowsRead != 1200 || r.Rows != 1200 || !r.Input.Sampled || r.Input.Files != 2 {
		t.Errorf("two files, sample 1200: rows %d, input %+v", r.Rows, r.Input)
	}

	// Parquet, with row groups of 300 rows.
	pq := filepath.Join(dir, "o.parquet")
	f, err := os.Create(pq)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Write(f, gen.Options{Dataset: "orders", Rows: 2000, Seed: 3, Format: "parquet", RowGroupRows: 300}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	job = &Job{Input: StringList{pq}, Columns: ordersColumns}
	r = runAnalyze(t, job, AnalyzeOptions{Sample: 1000})
	if r.Input.RowsRead != 1000 || r.Rows != 1000 || !r.Input.Sampled {
		t.Errorf("parquet sample 1000: rows %d, input %+v", r.Rows, r.Input)
	}
}

// Bad rows are counted and reported, not fatal, unless the job sets a limit.
func TestAnalyzeRejects(t *testing.T) {
	dir := t.TempDir()
	var csv strings.Builder
	for i := 0; i < 100; i++ {
		if i%30 == 7 {
			fmt.Fprintf(&csv, "bad%d,x,y,z\n", i) // 4 fields for a 2-column spec
			continue
		}
		fmt.Fprintf(&csv, "k%03d,v%d\n", i, i)
	}
	in := writeFile(t, dir, "bad.csv", csv.String())
	job := &Job{Input: StringList{in}, Columns: "HBASE_ROW_KEY,d:v"}
	var rejects bytes.Buffer
	r := runAnalyze(t, job, AnalyzeOptions{Rejects: &rejects})
	if r.Input.RowsRead != 100 || r.Input.RowsRejected != 4 || r.Rows != 96 {
		t.Errorf("rows %d, input %+v", r.Rows, r.Input)
	}
	if w := warning(r, "rejected_rows"); w == nil || !strings.Contains(w.Message, "4 of 100") {
		t.Errorf("rejected_rows warning: %+v", w)
	}
	if len(r.Input.RejectExamples) != 3 {
		t.Fatalf("reject examples %q", r.Input.RejectExamples)
	}
	var rec struct {
		Line   int64  `json:"line"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(r.Input.RejectExamples[0]), &rec); err != nil || rec.Line != 8 || rec.Reason == "" {
		t.Errorf("first reject example %q: %+v %v", r.Input.RejectExamples[0], rec, err)
	}
	if n := strings.Count(rejects.String(), "\n"); n != 4 {
		t.Errorf("rejects writer got %d lines", n)
	}

	// A sample counts good and bad rows in input order: rows 0..39 hold the bad rows 7 and 37.
	r = runAnalyze(t, job, AnalyzeOptions{Sample: 40})
	if r.Input.RowsRead != 40 || r.Input.RowsRejected != 2 || r.Rows != 38 || !r.Input.Sampled {
		t.Errorf("sample 40: rows %d, input %+v", r.Rows, r.Input)
	}
	r = runAnalyze(t, job, AnalyzeOptions{Sample: 37}) // stops just before bad row 37
	if r.Input.RowsRead != 37 || r.Input.RowsRejected != 1 || r.Rows != 36 {
		t.Errorf("sample 37: rows %d, input %+v", r.Rows, r.Input)
	}

	job = &Job{Input: StringList{in}, Columns: "HBASE_ROW_KEY,d:v", MaxRejects: 2}
	_, err := Analyze(context.Background(), job, AnalyzeOptions{Now: analyzeNow})
	if !errors.Is(err, ErrTooManyRejects) || ExitCode(err) != ExitRejects {
		t.Errorf("max_rejects 2 with 4 bad rows: %v (exit %d)", err, ExitCode(err))
	}
}

func TestAnalyzeConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		job  *Job
		opts AnalyzeOptions
		want string
	}{
		{"no input", &Job{Columns: "HBASE_ROW_KEY,d:v"}, AnalyzeOptions{}, "input: required"},
		{"no mapping", &Job{Input: StringList{"x.csv"}}, AnalyzeOptions{}, "columns or mapping"},
		{"negative sample", &Job{Input: StringList{"x.csv"}, Columns: "HBASE_ROW_KEY,d:v"}, AnalyzeOptions{Sample: -1}, "negative"},
		{"too many regions", &Job{Input: StringList{"x.csv"}, Columns: "HBASE_ROW_KEY,d:v"}, AnalyzeOptions{Regions: 2_000_000}, "regions"},
		{"bad table", &Job{Input: StringList{"x.csv"}, Columns: "HBASE_ROW_KEY,d:v", Table: "-x"}, AnalyzeOptions{}, "table"},
	}
	for _, c := range cases {
		_, err := Analyze(context.Background(), c.job, c.opts)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrConfig mentioning %q", c.name, err, c.want)
		}
	}
	// A missing input file is an I/O or configuration failure, never a panic or success.
	_, err := Analyze(context.Background(), &Job{Input: StringList{filepath.Join(t.TempDir(), "none.csv")},
		Columns: "HBASE_ROW_KEY,d:v"}, AnalyzeOptions{})
	if err == nil || ExitCode(err) == ExitOK {
		t.Errorf("missing input: %v", err)
	}
}
