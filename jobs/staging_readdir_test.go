package jobs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadDirUnsortedMatchesOS: readDirUnsorted lists what os.File.ReadDir lists, in the same order,
// with the same directory flags, for a directory larger than one read of entries (2,000 files with
// names of 1 to 200 bytes, sub-directories, a symlink to a directory, which is not one), whatever the
// hint (none, about right, far too small), and an empty one; a missing directory fails with its path.
func TestReadDirUnsortedMatchesOS(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 2000; i++ {
		name := fmt.Sprintf("%032x", i*7919)
		if i%50 == 0 {
			name = strings.Repeat("x", 1+i%200) + fmt.Sprint(i)
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"sub", "ä dir"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "sub")
	for k, d := range []string{dir, empty, dir, dir} {
		hint := []dirHint{{}, {}, {files: 2003, nameBytes: 2003 * 32}, {files: 10, nameBytes: 100}}[k] // none, exact, short
		got, err := readDirUnsorted(d, hint)
		if err != nil {
			t.Fatal(err)
		}
		want, err := osReadDirUnsorted(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d entries, os lists %d", d, len(got), len(want))
		}
		for i := range want {
			if got[i].name != want[i].Name() || got[i].dir != want[i].IsDir() {
				t.Fatalf("%s: entry %d is %q dir %v, os lists %q dir %v", d, i, got[i].name, got[i].dir, want[i].Name(), want[i].IsDir())
			}
		}
	}
	missing := filepath.Join(dir, "missing")
	if _, err := readDirUnsorted(missing, dirHint{}); !os.IsNotExist(err) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("a missing directory: %v", err)
	}
}

// TestClosedSizesHints: hints counts each family's closed files and their names' bytes, the families'
// files interleaved as the writers close them.
func TestClosedSizesHints(t *testing.T) {
	var c closedSizes
	c.put("a", "x1", 1)
	c.put("a", "yy22", 2)
	c.put("b", "z", 3)
	c.put("a", "w", 4)
	c.put("c", "0123", 5)
	c.put("c", "45", 6)
	got := c.hints()
	want := map[string]dirHint{"a": {3, 7}, "b": {1, 1}, "c": {2, 6}}
	if len(got) != len(want) {
		t.Fatalf("hints %v, want %v", got, want)
	}
	for fam, h := range want {
		if got[fam] != h {
			t.Fatalf("hints %v, want %v", got, want)
		}
	}
	if h := (closedSizes{}).hints(); len(h) != 0 {
		t.Fatalf("hints of nothing: %v", h)
	}
}
