package beamtest

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// aggregateJob aggregates every kind of exact fold a map's combiner applies: long sum, count, long max,
// decimal min (ties of equal value, other text), last (by input order, across units), and the
// duplicates policy (last) for the cells no rule covers. %s is an extra rule.
const aggregateJob = `
table: t
header: true
split_uniform: 3
keyspace: decimal
duplicates: last
memory: 64MiB
mapping:
  columns:
    - {name: id}
    - {name: n, type: long}
    - {name: d, type: decimal}
    - {name: x, type: double}
    - {name: name}
  rowkey: [id]
  cells:
    - {family: a, qualifier: sum, value: n}
    - {family: a, qualifier: cnt, value: _one}
    - {family: a, qualifier: max, value: n}
    - {family: a, qualifier: dmin, value: d}
    - {family: a, qualifier: last, value: name}
    - {family: a, qualifier: x, value: x}
    - {family: b, qualifier: name, value: name}
aggregate:
  - {cell: "a:sum", op: sum, type: long}
  - {cell: "a:cnt", op: count}
  - {cell: "a:max", op: max, type: long}
  - {cell: "a:dmin", op: min, type: decimal}
  - {cell: "a:last", op: last}
  - %s
`

// AggregateCase is a job whose keys repeat many times within each of its six CSV files (400 distinct
// rows, 1,000 rows a file, in 3 regions and 2 families), with aggregates the maps may fold
// (exact: integer and decimal arithmetic, min/max, last by input order) and, for the cells a:x,
// max(double) — or, with doubleSum, sum(double), whose rounding depends on the grouping of its
// operands, so the maps must leave its job unfolded.
func AggregateCase(doubleSum bool) Case {
	name, rule := "aggregate-exact", `{cell: "a:x", op: max, type: double}`
	if doubleSum {
		name, rule = "aggregate-double-sum", `{cell: "a:x", op: sum, type: double}`
	}
	return Case{Name: name, YAML: fmt.Sprintf(aggregateJob, rule), Inputs: aggregateInputs(6, 1000, 400)}
}

// aggregateInputs writes files CSV files of rows rows with ids drawn from keys values; decimals with
// varying scale (1.5, 1.50, 01.500 tie in value), doubles that round differently when summed in
// another order.
func aggregateInputs(files, rows, keys int) func(t testing.TB, dir string) []string {
	return func(t testing.TB, dir string) []string {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(int64(files*rows + keys)))
		var paths []string
		for f := 0; f < files; f++ {
			var b strings.Builder
			b.WriteString("id,n,d,x,name\n")
			for r := 0; r < rows; r++ {
				d := fmt.Sprintf("%d.%d", rng.Intn(50), rng.Intn(10))
				if rng.Intn(4) == 0 {
					d += "0"
				}
				x := fmt.Sprintf("%g", rng.Float64()*1e-3+float64(rng.Intn(3))*1e15)
				fmt.Fprintf(&b, "%06d,%d,%s,%s,name %d\n", rng.Intn(keys)*2477, rng.Intn(2000)-1000, d, x, rng.Intn(1000))
			}
			p := filepath.Join(dir, fmt.Sprintf("agg-%d.csv", f))
			if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		return paths
	}
}
