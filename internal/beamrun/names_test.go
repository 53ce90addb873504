package beamrun_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/hfload/hfload/internal/beamrun"
	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/jobs"
)

// TestPrismNamesFollowInputs (issue 23 item 8): hfload-beam on Prism names its HFiles as `hfload run`
// does (beamtest.Compare: the same files, names included), the same on an identical rerun, and
// otherwise when one input byte or one setting differs.
func TestPrismNamesFollowInputs(t *testing.T) {
	prism := func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
		return beamtask.Loader(job, beamtest.Started, beamrun.Runner("prism"), beamtask.Options{})
	}
	names := func(c beamtest.Case) []string {
		t.Helper()
		res := beamtest.Compare(t, c, prism)
		var out []string
		for _, f := range res.Manifest.Files {
			out = append(out, filepath.Base(f.Path))
		}
		sort.Strings(out)
		if len(out) == 0 {
			t.Fatal("no HFiles")
		}
		return out
	}
	c := beamtest.Cases()[0] // CSV inputs, split_sample
	first := names(c)
	if again := names(c); !slices.Equal(again, first) {
		t.Errorf("identical rerun: names %v, first run %v", again, first)
	}
	byte1 := c
	byte1.Inputs = func(t testing.TB, dir string) []string {
		ins := c.Inputs(t, dir)
		b, err := os.ReadFile(ins[1])
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.IndexByte(b, '\n') + 1 // the first digit of the second line's zero-padded id
		if b[i] != '0' {
			t.Fatalf("unexpected input %q", b[:i+8])
		}
		b[i] = '1'
		if err := os.WriteFile(ins[1], b, 0o644); err != nil {
			t.Fatal(err)
		}
		return ins
	}
	if other := names(byte1); shared(other, first) {
		t.Errorf("one input byte differs: names %v share one with %v", other, first)
	}
	setting := c
	setting.YAML += "block_size: 32KiB\n"
	if other := names(setting); shared(other, first) {
		t.Errorf("block_size differs: names %v share one with %v", other, first)
	}
}

func shared(a, b []string) bool {
	in := map[string]bool{}
	for _, s := range a {
		in[s] = true
	}
	for _, s := range b {
		if in[s] {
			return true
		}
	}
	return false
}
