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
// names of 1 to 200 bytes, sub-directories, a symlink to a directory, which is not one), and an empty
// one; a missing directory fails with its path.
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
	for _, d := range []string{dir, empty} {
		got, err := readDirUnsorted(d)
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
	if _, err := readDirUnsorted(missing); !os.IsNotExist(err) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("a missing directory: %v", err)
	}
}
