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

// Issue 23 item 4: decimal keys 1000001-1020000 under --split-uniform 4 --keyspace decimal leave 3 of 4
// regions empty. The warning gives the data's real key range and names --split-sample, not the
// option that made the split points.
func TestAnalyzeEmptyRegionsNamesKeyRangeAndFix(t *testing.T) {
	var csv strings.Builder
	for i := 1000001; i <= 1020000; i++ {
		fmt.Fprintf(&csv, "%d,v%d\n", i, i%7)
	}
	in := writeFile(t, t.TempDir(), "ids.csv", csv.String())
	job := &Job{Input: StringList{in}, Columns: "HBASE_ROW_KEY,d:v", Timestamp: 1700000000000,
		SplitUniform: 4, Keyspace: "decimal"}
	r := runAnalyze(t, job, AnalyzeOptions{})
	if r.RegionSkew.Empty != 3 {
		t.Fatalf("regions %+v", r.Regions)
	}
	if k := r.KeyRange; k.First != "1000001" || k.Last != "1020000" || k.CommonPrefix != "10" || k.MinLength != 7 || k.MaxLength != 7 {
		t.Errorf("key range %+v", k)
	}
	w := warning(r, "empty_regions")
	if w == nil {
		t.Fatalf("no empty_regions warning: %v", codes(r))
	}
	for _, want := range []string{`"1000001"`, `"1020000"`, "7 bytes", `starting with "10"`, "--split-sample 4"} {
		if !strings.Contains(w.Message, want) {
			t.Errorf("empty_regions lacks %q: %s", want, w.Message)
		}
	}
	if strings.Contains(w.Message, "--keyspace hex|decimal") {
		t.Errorf("empty_regions advises the option that made the split points: %s", w.Message)
	}
	// The fix it names works: split points from the data leave no region empty.
	job.SplitUniform, job.Keyspace = 0, ""
	job.Splits = writeFile(t, t.TempDir(), "splits.txt", strings.Join(r.SuggestedSplits, "\n")+"\n")
	if r2 := runAnalyze(t, job, AnalyzeOptions{}); r2.RegionSkew.Empty != 0 || warning(r2, "empty_regions") != nil {
		t.Errorf("suggested splits: %+v %v", r2.RegionSkew, codes(r2))
	}
}
