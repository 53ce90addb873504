package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/jobs"
)

// Issue 23 item 10: progress says rows/s and rejects while reading, labels the write phase's bytes
// (KeyValues) and never shows "0 rows" there; counts have the right plural; the summary's lines are short.
func TestProgressAndSummaryText(t *testing.T) {
	clock := time.Unix(1000, 0)
	events := []jobs.Progress{
		{Phase: "read", BytesDone: 1 << 20, BytesTotal: 4 << 20, RowsRead: 1, RowsRejected: 1},
		{Phase: "read", BytesDone: 4 << 20, BytesTotal: 4 << 20, RowsRead: 20000, RowsRejected: 3},
		{Phase: "write", BytesDone: 1 << 20, BytesTotal: 2 << 20, CellsDone: 24051712},
	}
	for _, tty := range []bool{false, true} {
		var buf bytes.Buffer
		p := newProgress(&buf, false)
		p.tty, p.every = tty, 0
		p.now = func() time.Time { return clock }
		for _, ev := range events {
			clock = clock.Add(2 * time.Second)
			p.update(ev)
		}
		p.done()
		out := buf.String()
		for _, want := range []string{"1 row (", "20000 rows (10.0k rows/s)", "1 rejected", "3 rejected", "KeyValues", "24051712 cells"} {
			if !strings.Contains(out, want) {
				t.Errorf("tty=%v: progress output lacks %q:\n%s", tty, want, out)
			}
		}
		if i := strings.Index(out, "KeyValues"); strings.Contains(out[i:], " rows") || strings.Contains(out, " 0 rows") {
			t.Errorf("tty=%v: rows shown while writing:\n%s", tty, out)
		}
	}

	res := &jobs.ExecuteResult{OutDir: "/out", Spills: 1, SpillBytes: 1 << 30, MergePasses: 1, PeakSortBytes: 900 << 20,
		Seconds: 3456.7, ReadSeconds: 1234.5, WriteSeconds: 2100.0, VerifyWaitSeconds: 12.3, CommitSeconds: 12.3,
		Manifest: &jobs.Manifest{Counts: jobs.Counts{RowsRead: 1, RowsKeyed: 1, CellsEmitted: 1, CellsWritten: 1,
			FilesWritten: 1, BytesWritten: 5000, BytesRead: 100 << 30}}}
	var sum bytes.Buffer
	printRunResult(&sum, res, false)
	for _, want := range []string{"1 file,", "1 region\n", "1 spill (1.0 GiB), 1 merge pass,", "(31.1 MB/s)"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
	for _, line := range strings.Split(sum.String(), "\n") {
		if len(line) > 100 {
			t.Errorf("summary line of %d characters: %q", len(line), line)
		}
	}

	// make demo shows the bars on a terminal (without one, the log lines).
	demo, err := os.ReadFile("../../scripts/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(demo), "--no-progress") {
		t.Error("scripts/demo.sh passes --no-progress: a newcomer never sees the progress display")
	}
}
