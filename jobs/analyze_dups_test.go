package jobs

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 23 item 3: 300,000 unique row keys (a load with duplicates: error succeeds on them) give no
// duplicate warning, no example and zero counts.
func TestAnalyzeUniqueKeysNoDuplicateAlarm(t *testing.T) {
	dir := t.TempDir()
	keys := hexKeys(300_000)
	var csv strings.Builder
	for i, k := range keys {
		fmt.Fprintf(&csv, "%s,c%d,%d,p%d\n", k, i%977, i, i%31)
	}
	in := writeFile(t, dir, "uniq.csv", csv.String())
	job := &Job{Input: StringList{in}, Columns: "HBASE_ROW_KEY,d:customer,d:n,d:product", Timestamp: 1700000000000}
	r := runAnalyze(t, job, AnalyzeOptions{})
	d := r.Duplicates
	if r.Rows != 300_000 || d.EstimatedRows != 0 || d.EstimatedCells != 0 || len(d.Examples) != 0 {
		t.Errorf("rows %d, duplicate rows %d cells %d, %d examples %+v", r.Rows, d.EstimatedRows, d.EstimatedCells,
			len(d.Examples), d.Examples[:min(3, len(d.Examples))])
	}
	for _, w := range r.Warnings {
		if strings.HasPrefix(w.Code, "duplicate") {
			t.Errorf("warning on unique keys: [%s] %s", w.Code, w.Message)
		}
	}
}
