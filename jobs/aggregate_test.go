package jobs

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/gen"
	"github.com/hfload/hfload/internal/kv"
)

// aggJob parses a job file text and points it at in and out.
func aggJob(t *testing.T, text, in, out string) *Job {
	t.Helper()
	j, err := ParseJob("job.yaml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	j.Name, j.Table, j.Input, j.Out, j.Header, j.Timestamp = "agg", "t", []string{in}, out, true, testTS
	if j.Memory == 0 {
		j.Memory = Size(64 << 20)
	}
	return j
}

// aggCell is a cell read back from an HFile.
type aggCell struct{ row, fam, qual, val string }

// readAggOutput verifies every HFile of a run and returns its cells in file order, checking that all
// carry the job's timestamp, that keys are strictly increasing and that the manifest's cell counts match.
func readAggOutput(t *testing.T, out string, m *Manifest) []aggCell {
	t.Helper()
	var cells []aggCell
	for _, f := range m.Files {
		r, c, err := hfilewriter.OpenFile(filepath.Join(out, f.Path))
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if err := r.Verify(); err != nil {
			t.Fatalf("%s: verify: %v", f.Path, err)
		}
		it := r.Iter()
		var prev []byte
		var n int64
		for it.Next() {
			cell := it.Cell()
			if cell.Timestamp != testTS {
				t.Fatalf("%s: cell %s has timestamp %d, want the job's %d", f.Path, cell, cell.Timestamp, testTS)
			}
			k := cell.Key()
			if prev != nil && kv.CompareKeys(prev, k) >= 0 {
				t.Fatalf("%s: keys not strictly increasing at %s", f.Path, cell)
			}
			prev = k
			cells = append(cells, aggCell{string(cell.Row), string(cell.Family), string(cell.Qualifier), string(cell.Value)})
			n++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if n != f.Cells {
			t.Fatalf("%s: %d cells, manifest says %d", f.Path, n, f.Cells)
		}
	}
	return cells
}

func be64(v int64) string  { return string(binary.BigEndian.AppendUint64(nil, uint64(v))) }
func be32(v uint32) string { return string(binary.BigEndian.AppendUint32(nil, v)) }
func be16(v uint16) string { return string(binary.BigEndian.AppendUint16(nil, v)) }
func dbl(f float64) string { return be64(int64(math.Float64bits(f))) }

const wideJob = `
mapping:
  columns:
    - {name: metric}
    - {name: host}
    - {name: ts, type: long}
    - {name: value, type: double}
  rowkey: [metric, "'|'", "time_bucket(ts, 1h)", "'|'", host]
  cells:
    - family: t
      qualifier_parts: ["time_offset(ts, 1h, s, 2)"]
      value: value
aggregate:
  - {cell: t, op: max, type: double}
`

// TestAggregateWideRowBuckets packs samples into OpenTSDB-style rows: the sample exactly at an hour's
// start goes to that hour with offset 0, the one a second before to the previous hour with offset 3599,
// whatever the input order; a repeated sample folds into its maximum.
func TestAggregateWideRowBuckets(t *testing.T) {
	dir := t.TempDir()
	const h = 1704070800 // 2024-01-01 01:00:00 UTC, an hour start (s)
	in := filepath.Join(dir, "m.csv")
	lines := []string{
		fmt.Sprintf("cpu,a,%d,7", (h+1800)*1000),    // 01:30:00 -> bucket h, offset 1800
		fmt.Sprintf("cpu,a,%d,1.5", h*1000),         // 01:00:00 exactly -> bucket h, offset 0
		fmt.Sprintf("cpu,a,%d,2.5", (h-1)*1000),     // 00:59:59 -> bucket h-3600, offset 3599
		fmt.Sprintf("cpu,a,%d,3", (h+3599)*1000),    // 01:59:59 -> bucket h, offset 3599
		fmt.Sprintf("cpu,a,%d,4", (h+3600)*1000),    // 02:00:00 -> bucket h+3600, offset 0
		fmt.Sprintf("cpu,b,%d,5", h*1000),           // other host: other row
		fmt.Sprintf("cpu,a,%d,9", (h+1800)*1000),    // repeat of 01:30:00 -> max(7, 9)
		fmt.Sprintf("cpu,a,%d,8", (h+1800)*1000+10), // 10 ms later: same second -> same qualifier, max 9
		fmt.Sprintf("mem,a,%d,6", (h-3600)*1000),    // other metric
	}
	os.WriteFile(in, []byte("metric,host,ts,value\n"+strings.Join(lines, "\n")+"\n"), 0o644)
	out := filepath.Join(dir, "out")
	res, err := Execute(context.Background(), aggJob(t, wideJob, in, out), ExecuteOptions{Verify: VerifyFull})
	if err != nil {
		t.Fatal(err)
	}
	row := func(metric string, bucket uint32, host string) string {
		return metric + "|" + be32(bucket) + "|" + host
	}
	want := []aggCell{
		{row("cpu", h-3600, "a"), "t", be16(3599), dbl(2.5)},
		{row("cpu", h, "a"), "t", be16(0), dbl(1.5)},
		{row("cpu", h, "a"), "t", be16(1800), dbl(9)},
		{row("cpu", h, "a"), "t", be16(3599), dbl(3)},
		{row("cpu", h, "b"), "t", be16(0), dbl(5)},
		{row("cpu", h+3600, "a"), "t", be16(0), dbl(4)},
		{row("mem", h-3600, "a"), "t", be16(0), dbl(6)},
	}
	got := readAggOutput(t, out, res.Manifest)
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("cells\n got %q\nwant %q", got, want)
	}
	c := res.Manifest.Counts
	if c.CellsEmitted != 9 || c.CellsWritten != 7 || c.Combined != 2 || c.RowsWritten != 5 {
		t.Fatalf("counts %+v", c)
	}
}

// TestAggregateWideRowsGenMetrics loads shuffled `hfload gen metrics` rows and checks every sample
// against its row, qualifier and value computed here from the CSV.
func TestAggregateWideRowsGenMetrics(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Dataset: "metrics", Rows: 12000, Seed: 3, Header: true}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header, body := recs[0], recs[1:]
	rand.New(rand.NewSource(5)).Shuffle(len(body), func(i, j int) { body[i], body[j] = body[j], body[i] })
	var sb strings.Builder
	w := csv.NewWriter(&sb)
	w.Write(header)
	w.WriteAll(body)
	in := filepath.Join(dir, "metrics.csv")
	os.WriteFile(in, []byte(sb.String()), 0o644)

	want := map[string]string{}
	for _, r := range body {
		if r[3] == "" {
			continue // NULL value: no cell
		}
		ms, _ := strconv.ParseInt(r[2], 10, 64)
		sec := ms / 1000
		v, _ := strconv.ParseFloat(r[3], 64)
		k := r[0] + "|" + be32(uint32(sec-sec%3600)) + "|" + r[1] + "\x00" + be16(uint16(sec%3600))
		if _, dup := want[k]; dup {
			t.Fatalf("gen metrics repeats a sample: %q", k)
		}
		want[k] = dbl(v)
	}
	out := filepath.Join(dir, "out")
	res, err := Execute(context.Background(), aggJob(t, wideJob, in, out), ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAggOutput(t, out, res.Manifest)
	if len(got) != len(want) {
		t.Fatalf("%d cells, want %d", len(got), len(want))
	}
	rows := map[string]bool{}
	for _, c := range got {
		k := c.row + "\x00" + c.qual
		if want[k] != c.val {
			t.Fatalf("cell %q/%x = %x, want %x", c.row, c.qual, c.val, want[k])
		}
		rows[c.row] = true
	}
	// 6 metrics x 50 hosts; 12000 samples every 10 s per (metric, host) = 40 samples, all in hour 0.
	if len(rows) != 300 || res.Manifest.Counts.Combined != 0 {
		t.Fatalf("%d rows, %d combined", len(rows), res.Manifest.Counts.Combined)
	}
}

// revenueGroup is the independent aggregation of the daily-revenue example.
type revenueGroup struct {
	n, qty        map[string]int64
	price         map[string]*big.Rat
	orders, items int64
	maxPrice      *big.Rat
	maxPriceText  string
}

// TestAggregateDailyRevenueExample runs examples/daily-revenue.yaml on `hfload gen orders` data and
// compares every cell with the same aggregation computed here from the CSV (decimals exactly).
func TestAggregateDailyRevenueExample(t *testing.T) {
	for _, format := range []string{"csv", "parquet", "csv-split-sample"} {
		t.Run(format, func(t *testing.T) { testDailyRevenue(t, format) })
	}
}

func testDailyRevenue(t *testing.T, format string) {
	dir := t.TempDir()
	var buf bytes.Buffer
	rows := int64(30000)
	if format == "parquet" {
		rows = 8000
	}
	if _, err := gen.Write(&buf, gen.Options{Dataset: "orders", Rows: rows, Seed: 9, Header: true}); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "orders.csv")
	os.WriteFile(in, buf.Bytes(), 0o644)
	if format == "parquet" { // the same rows (same seed) as Parquet; the CSV gives the expectations
		var pq bytes.Buffer
		if _, err := gen.Write(&pq, gen.Options{Dataset: "orders", Rows: rows, Seed: 9, Format: "parquet", RowGroupRows: 3000}); err != nil {
			t.Fatal(err)
		}
		in = filepath.Join(dir, "orders.parquet")
		os.WriteFile(in, pq.Bytes(), 0o644)
	}
	recs, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]*revenueGroup{}
	var emitted int64
	for _, r := range recs[1:] {
		cust, _ := strconv.ParseInt(r[1], 10, 64)
		ts, err := time.Parse(time.DateTime, r[3])
		if err != nil {
			t.Fatal(err)
		}
		day := ts.Unix() - ts.Unix()%86400
		key := be64(cust) + be32(uint32(day))
		g := groups[key]
		if g == nil {
			g = &revenueGroup{n: map[string]int64{}, qty: map[string]int64{}, price: map[string]*big.Rat{}}
			groups[key] = g
		}
		p := r[2]
		g.n[p]++
		g.orders++
		emitted += 4
		if r[4] != "" {
			q, _ := strconv.ParseInt(r[4], 10, 64)
			g.qty[p] += q
			g.items += q
			emitted += 2
		}
		price, ok := new(big.Rat).SetString(r[5])
		if !ok {
			t.Fatalf("price %q", r[5])
		}
		if g.price[p] == nil {
			g.price[p] = new(big.Rat)
		}
		g.price[p].Add(g.price[p], price)
		if g.maxPrice == nil || price.Cmp(g.maxPrice) > 0 {
			g.maxPrice, g.maxPriceText = price, r[5]
		}
	}
	want := map[string]string{}
	for key, g := range groups {
		for p, n := range g.n {
			want[key+"\x00n:"+p] = be64(n)
			want[key+"\x00price:"+p] = g.price[p].FloatString(2) // all prices have 2 decimals: so has the sum
		}
		for p, q := range g.qty {
			want[key+"\x00qty:"+p] = be64(q)
		}
		want[key+"\x00orders"] = be64(g.orders)
		if len(g.qty) > 0 {
			want[key+"\x00items"] = be64(g.items)
		}
		want[key+"\x00maxprice"] = g.maxPriceText
	}

	out := filepath.Join(dir, "out")
	sets := []string{"input=" + in, "out=" + out, "memory=32MiB", "workers=2"}
	if format == "csv-split-sample" { // regions cut at row boundaries of the folded output
		sets = append(sets, "split_sample=3")
	}
	job, err := LoadJob(filepath.Join("..", "examples", "daily-revenue.yaml"), nil, sets)
	if err != nil {
		t.Fatal(err)
	}
	job.Timestamp = testTS
	res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyBlocks})
	if err != nil {
		t.Fatal(err)
	}
	got := readAggOutput(t, out, res.Manifest)
	if len(got) != len(want) {
		t.Fatalf("%d cells, want %d", len(got), len(want))
	}
	for _, c := range got {
		k := c.row + "\x00" + c.qual
		w, ok := want[k]
		if !ok || w != c.val {
			t.Fatalf("cell %x %s = %q, want %q (present %v)", c.row, c.qual, c.val, w, ok)
		}
	}
	cn := res.Manifest.Counts
	if cn.CellsEmitted != emitted || cn.CellsWritten != int64(len(want)) || cn.Combined != emitted-int64(len(want)) ||
		cn.RowsWritten != int64(len(groups)) || cn.Duplicates != 0 {
		t.Fatalf("counts %+v; want emitted %d, written %d, rows %d", cn, emitted, len(want), len(groups))
	}
	if cn.Combined == 0 {
		t.Fatal("nothing folded: the test data should repeat (customer, day, product) groups")
	}
	if format == "csv-split-sample" && len(res.Manifest.Files) != 3 {
		t.Fatalf("split_sample 3: %d files", len(res.Manifest.Files))
	}
}

// TestAggregateMillionRowsOneCell folds a million input rows with one key into one cell per rule
// within a 32 MiB budget.
func TestAggregateMillionRowsOneCell(t *testing.T) {
	if testing.Short() {
		t.Skip("a million rows")
	}
	dir := t.TempDir()
	const n = 1000000
	var b bytes.Buffer
	b.WriteString("k,v\n")
	var sum int64
	minV, maxV := int64(math.MaxInt64), int64(math.MinInt64)
	for i := 0; i < n; i++ {
		v := int64(i%1000003) - 500000
		sum += v
		minV, maxV = min(minV, v), max(maxV, v)
		b.WriteString("g,")
		b.WriteString(strconv.FormatInt(v, 10))
		b.WriteByte('\n')
	}
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, b.Bytes(), 0o644)
	out := filepath.Join(dir, "out")
	job := aggJob(t, `
memory: 32MiB
mapping:
  columns:
    - {name: k}
    - {name: v, type: long}
  rowkey: [k]
  cells:
    - {family: d, qualifier: sum, value: v}
    - {family: d, qualifier: n, value: _one}
    - {family: d, qualifier: lo, value: v}
    - {family: d, qualifier: hi, value: v}
aggregate:
  - {cell: "d:sum", op: sum, type: long}
  - {cell: "d:n", op: count}
  - {cell: "d:lo", op: min, type: long}
  - {cell: "d:hi", op: max, type: long}
`, in, out)
	res, err := Execute(context.Background(), job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAggOutput(t, out, res.Manifest)
	want := []aggCell{{"g", "d", "hi", be64(maxV)}, {"g", "d", "lo", be64(minV)}, {"g", "d", "n", be64(n)}, {"g", "d", "sum", be64(sum)}}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("cells\n got %q\nwant %q", got, want)
	}
	if res.PeakSortBytes <= 0 || res.PeakSortBytes > 32<<20 {
		t.Fatalf("peak sort bytes %d, budget %d", res.PeakSortBytes, 32<<20)
	}
	c := res.Manifest.Counts
	if c.CellsEmitted != 4*n || c.CellsWritten != 4 || c.Combined != 4*n-4 {
		t.Fatalf("counts %+v", c)
	}
	t.Logf("%d rows -> 4 cells, peak sort bytes %d, spills %d", n, res.PeakSortBytes, res.Spills)
}

// TestAggregateOverflowFailsRun: a long sum that overflows fails the run with a clear message and
// commits nothing.
func TestAggregateOverflowFailsRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("k,v\na,9223372036854775807\nb,5\na,1\n"), 0o644)
	out := filepath.Join(dir, "out")
	job := aggJob(t, `
mapping:
  columns: [{name: k}, {name: v, type: long, cell: "d:total"}]
  rowkey: [k]
aggregate:
  - {cell: "d:total", op: sum, type: long}
`, in, out)
	_, err := Execute(context.Background(), job, ExecuteOptions{})
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "overflow") || !strings.Contains(err.Error(), `cell "d:total"`) {
		t.Fatalf("err = %v, want a long overflow naming the rule", err)
	}
	if _, serr := os.Stat(filepath.Join(out, ManifestName)); serr == nil {
		t.Fatal("a failed run must not leave a manifest")
	}
}

// TestAggregateUncoveredCells: equal keys of cells no rule covers follow the duplicates policy.
func TestAggregateUncoveredCells(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("k,name,v\na,first,1\nb,x,2\na,second,3\n"), 0o644)
	text := `
mapping:
  columns: [{name: k}, {name: name, cell: "d:name"}, {name: v, type: long, cell: "d:v"}]
  rowkey: [k]
aggregate:
  - {cell: "d:v", op: sum, type: long}
`
	_, err := Execute(context.Background(), aggJob(t, text, in, filepath.Join(dir, "err")), ExecuteOptions{})
	if !errors.Is(err, ErrDuplicates) || !strings.Contains(err.Error(), "not covered") {
		t.Fatalf("default policy: err %v, want ErrDuplicates for d:name", err)
	}
	for _, tc := range []struct{ policy, name string }{{"first", "first"}, {"last", "second"}} {
		out := filepath.Join(dir, tc.policy)
		job := aggJob(t, text, in, out)
		job.Duplicates = tc.policy
		res, err := Execute(context.Background(), job, ExecuteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := readAggOutput(t, out, res.Manifest)
		want := []aggCell{{"a", "d", "name", tc.name}, {"a", "d", "v", be64(4)}, {"b", "d", "name", "x"}, {"b", "d", "v", be64(2)}}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("%s: got %q", tc.policy, got)
		}
		if c := res.Manifest.Counts; c.Combined != 2 || c.CellsWritten != 4 {
			t.Fatalf("%s: counts %+v", tc.policy, c)
		}
	}
}

// TestAggregateConfigErrors: mistakes in aggregate: are configuration errors naming the line.
func TestAggregateConfigErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("k,v,x\na,1,2.5\n"), 0o644)
	const mapping = `
mapping:
  columns: [{name: k}, {name: v, type: long, cell: "d:v"}, {name: x, type: double, cell: "d:x"}]
  rowkey: [k]
`
	for _, tc := range []struct{ name, extra, want string }{
		{"unknown key", "aggregate:\n  - {cell: d:v, op: sum, typ: long}\n", `job file:6: unknown key "aggregate.typ" (did you mean "aggregate.type"?)`},
		{"not a list", "aggregate: {cell: d:v}\n", "want a list"},
		{"unknown op", "aggregate:\n  - {cell: d:v, op: avg, type: long}\n", `unknown aggregate "avg"`},
		{"unknown family", "aggregate:\n  - {cell: e:v, op: sum, type: long}\n", `"e" is not a family`},
		{"no type", "aggregate:\n  - {cell: d:v, op: sum}\n", "sum needs a type"},
		{"wrong column type", "aggregate:\n  - {cell: d:x, op: sum, type: long}\n", `column "x" of type double: sum(long) needs a column of type long`},
		{"count needs _one", "aggregate:\n  - {cell: d:v, op: count}\n", "takes its value from the column _one"},
		{"first and last", "aggregate:\n  - {cell: d:v, op: first}\n  - {cell: d:x, op: last}\n", "first and last cannot be mixed"},
		{"string sum", "aggregate:\n  - {cell: d:v, op: sum, type: string}\n", "sum is not defined for string"},
		{"templated count", "  cells: [{family: d, qualifier: \"n:$${k}\", value: v}]\naggregate:\n  - {cell: \"d:q*\", op: max, type: long}\n  - {cell: \"d:n:*\", op: count}\n",
			`cell "d:n:*" (count) covers the mapping's cell d:n:${k}, whose value is the column "v"`},
		{"templated type", "  cells: [{family: d, qualifier: \"q$${k}\", value: x}]\naggregate:\n  - {cell: \"d:n:*\", op: count}\n  - {cell: \"d:q*\", op: sum, type: long}\n",
			`cell "d:q*" (sum) covers the mapping's cell d:q${k}, whose value is the column "x" of type double: sum(long) needs a column of type long`},
	} {
		job := aggJob(t, mapping+tc.extra, in, filepath.Join(dir, "out"))
		_, err := job.Prepare(time.Unix(0, 0))
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrConfig containing %q", tc.name, err, tc.want)
		}
	}
	keep := aggJob(t, mapping+"aggregate:\n  - {cell: d, op: max, type: long}\n", in, filepath.Join(dir, "out"))
	keep.Duplicates = "keep"
	if _, err := keep.Prepare(time.Unix(0, 0)); err == nil || !strings.Contains(err.Error(), "keep cannot be combined") {
		t.Errorf("duplicates keep: err = %v", err)
	}
	tsCol := aggJob(t, mapping+"  timestamp: {column: v}\naggregate:\n  - {cell: d, op: max, type: long}\n", in, filepath.Join(dir, "out"))
	if _, err := tsCol.Prepare(time.Unix(0, 0)); err == nil || !strings.Contains(err.Error(), "timestamp.column") {
		t.Errorf("timestamp column: err = %v", err)
	}
}

// TestAggregateFirstLastAcrossSpills: first keeps the value of the earliest input row and last the
// latest, also when the group is cut into runs that spill and merge out of input order.
func TestAggregateFirstLastAcrossSpills(t *testing.T) {
	dir := t.TempDir()
	const n = 300000
	var b bytes.Buffer
	b.WriteString("k,v\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "g%d,r%07d\n", i%3, i)
	}
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, b.Bytes(), 0o644)
	for _, op := range []string{"first", "last"} {
		out := filepath.Join(dir, op)
		job := aggJob(t, `
memory: 32MiB
workers: 2
mapping:
  columns: [{name: k}, {name: v, cell: "d:v"}]
  rowkey: [k]
aggregate:
  - {cell: "d:v", op: `+op+`}
`, in, out)
		res, err := Execute(context.Background(), job, ExecuteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := readAggOutput(t, out, res.Manifest)
		want := []aggCell{{"g0", "d", "v", "r0000000"}, {"g1", "d", "v", "r0000001"}, {"g2", "d", "v", "r0000002"}}
		if op == "last" {
			want = []aggCell{{"g0", "d", "v", fmt.Sprintf("r%07d", n-3)}, {"g1", "d", "v", fmt.Sprintf("r%07d", n-2)}, {"g2", "d", "v", fmt.Sprintf("r%07d", n-1)}}
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("%s: got %q, want %q", op, got, want)
		}
		if res.Spills == 0 {
			t.Logf("%s: no spill (the budget was enough)", op)
		}
		if (res.Spills > 0) != (res.SpillBytes > 0) {
			t.Fatalf("%s: %d spills but spill_bytes %d", op, res.Spills, res.SpillBytes)
		}
		t.Logf("%s: spills %d, peak sort bytes %d", op, res.Spills, res.PeakSortBytes)
	}
}

// BenchmarkAggregationCombine measures one fold through the rule lookup (the sixth of six rules, the
// worst case of the daily-revenue example) against the bare sorter.Aggregator.
func BenchmarkAggregationCombine(b *testing.B) {
	j, err := ParseJob("job.yaml", []byte(`
mapping:
  columns: [{name: k}, {name: v, type: long}, {name: p, type: decimal}]
  rowkey: [k]
  cells: [{family: d, qualifier: "n:$${k}", value: _one}, {family: d, qualifier: "qty:$${k}", value: v}, {family: d, qualifier: "price:$${k}", value: p},
          {family: d, qualifier: orders, value: _one}, {family: d, qualifier: items, value: v}, {family: d, qualifier: maxprice, value: p}]
aggregate:
  - {cell: "d:n:*", op: count}
  - {cell: "d:qty:*", op: sum, type: long}
  - {cell: "d:price:*", op: sum, type: decimal}
  - {cell: "d:orders", op: count}
  - {cell: "d:maxprice", op: max, type: decimal}
  - {cell: "d:items", op: sum, type: long}
`), nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := j.MappingConfig()
	if err != nil {
		b.Fatal(err)
	}
	agg, err := j.Aggregation(cfg, DuplicatesError)
	if err != nil {
		b.Fatal(err)
	}
	h := cellrec.Header{Row: []byte("customer-0001day1"), Family: []byte("d"), TS: testTS, Type: kv.TypePut}
	q, x, y := []byte("items"), []byte(be64(3)), []byte(be64(4))
	dst := make([]byte, 0, 256)
	b.Run("rules", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			dst = agg.Combine(dst[:0], &h, q, x, y)
		}
	})
	b.Run("bare", func(b *testing.B) {
		g := agg.rules[5].agg
		for i := 0; i < b.N; i++ {
			dst = g.Combine(dst[:0], &h, q, x, y)
		}
	})
	if err := agg.Err(); err != nil || string(dst) != be64(7) {
		b.Fatalf("fold = %x, err %v", dst, err)
	}
}
