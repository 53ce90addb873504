package jobs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// verifyStaged checks that the files under the staging dir are exactly m.Files (relative paths
// <family>/<file>) with matching sizes: listStaged, then stagedTree.check. A file's size is the one in
// closed (FileWritten's; may be nil) if it is there: the file system's own figure, taken by fstat of
// the file's descriptor right before hfload closed it, after which nothing of the run writes it (the
// staging dir is the run's, under the output lock). Otherwise it is taken by a stat of the file. The
// stat of every path was most of the commit's CPU at 10,000 files (~6–15 µs a file, serial, after the
// writing has ended; perf record); fstat at close costs ~1 µs, in the write workers.
func verifyStaged(dir string, m *Manifest, closed closedSizes) error {
	t, err := listStaged(dir, closed)
	if err != nil {
		return err
	}
	return t.check(m)
}

// stagedTree is a staging dir as listStaged found it: its entries, and each family directory's files
// with their sizes at close.
type stagedTree struct {
	top  []fs.DirEntry  // the staging dir's entries, in name order
	fams []stagedFamily // one per directory in top, in the same order
}

// stagedFamily is one family directory of a stagedTree.
type stagedFamily struct {
	files []fs.DirEntry // in the directory's own order (readDirUnsorted)
	sizes []int64       // files[i]'s size at its close (closedSizes), -1 where none was reported
}

// listStaged reads the staging dir and each family dir once, and looks up every file's size at close
// in closed; the manifest is not needed yet. Staging.settle runs it while the manifest is built, so
// that the commit is left with the comparison (stagedTree.check).
func listStaged(dir string, closed closedSizes) (*stagedTree, error) {
	top, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	t := &stagedTree{top: top}
	for _, e := range top {
		if !e.IsDir() {
			continue
		}
		files, err := readDirUnsorted(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		here := closed[e.Name()]
		sizes := make([]int64, len(files))
		for i, f := range files {
			size, ok := here[f.Name()]
			if !ok {
				size = -1
			}
			sizes[i] = size
		}
		t.fams = append(t.fams, stagedFamily{files: files, sizes: sizes})
	}
	return t, nil
}

// check compares the listed tree with m.Files: every listed file staged with its size, nothing else
// staged but side files (_manifest.json, _rejects.jsonl and other top-level names starting with "_"),
// no path listed twice. It reports every problem: a family's in name order, then the missing files.
// A file without a size at close is stat'ed now.
func (t *stagedTree) check(m *Manifest) error {
	// want: each listed path's index in m.Files; seen: found staged. The paths of staged files are
	// looked up in a buffer (a map lookup of string(bytes) makes no string), not joined.
	want := make(map[string]int, len(m.Files))
	for i, f := range m.Files {
		if _, dup := want[filepath.ToSlash(f.Path)]; dup {
			return fmt.Errorf("%s listed twice", f.Path)
		}
		want[filepath.ToSlash(f.Path)] = i
	}
	seen := make([]bool, len(m.Files))
	var problems []string
	// check checks the staged file rel, whose size at close is size (-1: none).
	check := func(rel []byte, size int64, d fs.DirEntry) error {
		i, ok := want[string(rel)]
		if !ok || seen[i] {
			problems = append(problems, string(rel)+": staged but not in the manifest")
			return nil
		}
		seen[i] = true
		if size < 0 {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			size = fi.Size()
		}
		if size != m.Files[i].Bytes {
			problems = append(problems, fmt.Sprintf("%s: %d bytes, manifest says %d", rel, size, m.Files[i].Bytes))
		}
		return nil
	}
	var rel []byte
	fams := t.fams
	for _, e := range t.top {
		name := e.Name()
		if !e.IsDir() {
			if name == ManifestName || strings.HasPrefix(name, "_") {
				continue // side files such as _rejects.jsonl: completebulkload skips files under <out>
			}
			if err := check(append(rel[:0], name...), -1, e); err != nil {
				return err
			}
			continue
		}
		fam := fams[0]
		fams = fams[1:]
		before := len(problems)
		var names []string // the entry each problem found here is about (one problem at most per entry)
		for j, f := range fam.files {
			rel = append(append(append(rel[:0], name...), '/'), f.Name()...)
			if f.IsDir() {
				problems = append(problems, string(rel)+": unexpected sub-directory")
				names = append(names, f.Name())
				continue
			}
			n := len(problems)
			if err := check(rel, fam.sizes[j], f); err != nil {
				return err
			}
			if len(problems) > n {
				names = append(names, f.Name())
			}
		}
		sortByNames(problems[before:], names)
	}
	var missing []string
	for i, ok := range seen {
		if !ok {
			missing = append(missing, filepath.ToSlash(m.Files[i].Path)+": in the manifest but not staged")
		}
	}
	sort.Strings(missing)
	problems = append(problems, missing...)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// closedSizes are the sizes of files at their close (Staging.FileWritten): family → file name → size.
// Keyed by the names as given, no path is joined per file.
type closedSizes map[string]map[string]int64

// put records the size of family/name.
func (c closedSizes) put(family, name string, size int64) {
	here := c[family]
	if here == nil {
		here = map[string]int64{}
		c[family] = here
	}
	here[name] = size
}

// readDirUnsorted is os.ReadDir in the directory's own order: a family directory holds a file per
// region (10,000 and more), and sorting their names cost more than listing them. verifyStaged puts the
// problems it reports in name order itself (sortByNames).
func readDirUnsorted(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// sortByNames puts texts in the order of names (texts[i] is about names[i]; the names are distinct).
func sortByNames(texts, names []string) {
	if len(texts) < 2 {
		return
	}
	type named struct{ name, text string }
	all := make([]named, len(texts))
	for i := range texts {
		all[i] = named{names[i], texts[i]}
	}
	slices.SortFunc(all, func(a, b named) int { return strings.Compare(a.name, b.name) })
	for i := range all {
		texts[i] = all[i].text
	}
}
