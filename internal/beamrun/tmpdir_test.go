package beamrun_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/beamrun"
	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/jobs"
)

// TestPrivateTempDirLeavesNothing: a Prism pipeline in this process (loopback) leaves the SDK's
// "beamloopbackworker-*" placeholder in the temporary directory; run inside PrivateTempDir, the
// temporary directory holds nothing afterwards, and TMPDIR is what it was.
func TestPrivateTempDirLeavesNothing(t *testing.T) {
	c := beamtest.Cases()[1] // csv-aggregate: the smallest
	run := func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
		return beamtask.Loader(job, beamtest.Started, beamrun.Runner("prism"), beamtask.Options{})
	}
	placeholders := func(dir string) (n int, all []string) {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			all = append(all, e.Name())
			if strings.HasPrefix(e.Name(), "beamloopbackworker-") {
				n++
			}
		}
		return n, all
	}

	// Without it: the SDK's placeholder stays behind (the reason PrivateTempDir exists).
	bare := t.TempDir()
	t.Setenv("TMPDIR", bare)
	beamtest.Compare(t, c, run)
	if n, all := placeholders(bare); n == 0 {
		t.Logf("the Beam SDK no longer leaves a loopback placeholder (%v): PrivateTempDir may be unnecessary", all)
	}

	outer := t.TempDir()
	t.Setenv("TMPDIR", outer)
	cleanup, err := beamrun.PrivateTempDir()
	if err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("TMPDIR"); got == outer || !strings.HasPrefix(got, outer+string(os.PathSeparator)) {
		t.Fatalf("TMPDIR %q: want a new directory inside %q", got, outer)
	}
	beamtest.Compare(t, c, run)
	if n, _ := placeholders(os.Getenv("TMPDIR")); n == 0 {
		t.Errorf("no loopback placeholder in the private directory: the pipeline did not run in loopback mode there")
	}
	cleanup()
	if got := os.Getenv("TMPDIR"); got != outer {
		t.Errorf("TMPDIR after cleanup %q, want %q", got, outer)
	}
	if _, all := placeholders(outer); len(all) != 0 {
		t.Errorf("left in the temporary directory: %v", all)
	}
}
