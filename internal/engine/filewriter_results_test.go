package engine

import (
	"fmt"
	"testing"
)

// appendFileResult keeps every result in order and doubles the list: 10,000 files move it to a new
// array at most a dozen times (append's quarter steps take about twenty).
func TestAppendFileResultDoubles(t *testing.T) {
	var files []FileResult
	moves := 0
	for i := range 10000 {
		before := cap(files)
		files = appendFileResult(files, FileResult{Path: fmt.Sprint("d/", i), Region: i})
		if cap(files) != before {
			moves++
		}
	}
	for i, f := range files {
		if f.Region != i || f.Path != fmt.Sprint("d/", i) {
			t.Fatalf("result %d is %+v", i, f)
		}
	}
	if len(files) != 10000 || moves > 12 {
		t.Fatalf("%d results, the list moved %d times", len(files), moves)
	}
}
