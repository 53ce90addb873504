package jobs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestNameSeedLabelsContent (issue 23 item 8): the labels file counts by its content (the ordinals go into
// visibility tags), not by its path.
func TestNameSeedLabelsContent(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("id,name,amount\nk1,a,1\n"), 0o644)
	seed := func(name, labels string) []byte {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(labels), 0o644); err != nil {
			t.Fatal(err)
		}
		job := baseJob(in, filepath.Join(dir, "out"))
		job.Labels = p
		spec, err := job.PrepareContext(context.Background(), time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		return spec.SettingsSeed
	}
	a := seed("a", "secret=3\n")
	if b := seed("b", "secret=3\n"); !bytes.Equal(a, b) {
		t.Error("the same labels under another path: another seed")
	}
	if c := seed("c", "secret=4\n"); bytes.Equal(a, c) {
		t.Error("other label ordinals: the same seed")
	}
}
