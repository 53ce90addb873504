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
// closed (FileWritten's; may be nil) if it is there: the bytes the file system accepted for the file
// (the results of the write system calls, counted by internal/directio's Writer; the file was created
// empty, O_EXCL, and that Writer alone wrote it), after which nothing of the run writes it (the staging
// dir is the run's, under the output lock). Otherwise it is taken by a stat of the file. The stat of
// every path was most of the commit's CPU at 10,000 files (~6–15 µs a file, serial, after the writing
// has ended; perf record); an fstat at close cost ~1 µs a file in the write workers, the count nothing.
func verifyStaged(dir string, m *Manifest, closed closedSizes) error {
	t, err := listStaged(dir, closed)
	if err != nil {
		return err
	}
	return t.check(m)
}

// stagedTree is a staging dir as listStaged found it: its entries, and the files of the staging dir
// and of each family directory with their sizes at close, by name.
type stagedTree struct {
	top   []fs.DirEntry         // the staging dir's entries, in name order
	files stagedDir             // the staging dir's own files, side files left out
	fams  map[string]*stagedDir // each directory in top, by name
}

// stagedDir is the files of one directory of a stagedTree.
type stagedDir struct {
	path    string         // the directory's path
	entries []stagedEntry  // a family's: in the directory's own order (readDirUnsorted)
	sizes   []int64        // entries[i]'s size at its close (closedSizes), -1 where none was reported
	at      map[string]int // a file's name → its index in entries (sub-directories left out)
	listed  []int          // check: the index in m.Files of the file that lists entries[i], -1 if none
}

// index indexes the files by name, with no size at close yet (setSizes).
func (d *stagedDir) index() {
	d.sizes = make([]int64, len(d.entries))
	d.at = make(map[string]int, len(d.entries))
	for j, e := range d.entries {
		d.sizes[j] = -1
		if !e.dir {
			d.at[e.name] = j
		}
	}
}

// stagedEntry is a name listed in a directory of a stagedTree and whether it is a directory.
type stagedEntry struct {
	name string
	dir  bool
	ent  fs.DirEntry // the os's entry, if listed by os.ReadDir (else nil)
}

// info returns entry j's FileInfo (os.DirEntry.Info's: an lstat of its path).
func (d *stagedDir) info(j int) (fs.FileInfo, error) {
	if e := d.entries[j]; e.ent != nil {
		return e.ent.Info()
	}
	return os.Lstat(d.path + "/" + d.entries[j].name)
}

// setSizes gives each listed file of a family its size at close from closed, the later of two for one
// file. A file closed but not listed (or listed as a sub-directory) takes none.
func (t *stagedTree) setSizes(closed closedSizes) {
	var fam string
	var d *stagedDir
	for i := range closed {
		c := &closed[i]
		if d == nil || c.family != fam {
			fam, d = c.family, t.fams[c.family]
			if d == nil {
				continue
			}
		}
		if j, ok := d.at[c.name]; ok {
			d.sizes[j] = c.size
		}
	}
}

// listStaged reads the staging dir and each family dir once, looks up every file's size at close in
// closed and indexes the files by name; the manifest is not needed yet. Staging.settle runs it while
// the manifest is built, so that the commit is left with the comparison (stagedTree.check): one lookup
// of each listed file.
func listStaged(dir string, closed closedSizes) (*stagedTree, error) {
	top, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	t := &stagedTree{top: top, fams: map[string]*stagedDir{}}
	hints := closed.hints()
	for _, e := range top {
		name := e.Name()
		if !e.IsDir() {
			if name != ManifestName && !strings.HasPrefix(name, "_") { // side files such as _rejects.jsonl: completebulkload skips files under <out>
				t.files.entries = append(t.files.entries, stagedEntry{name: name, ent: e})
			}
			continue
		}
		famDir := filepath.Join(dir, name)
		entries, err := readDirUnsorted(famDir, hints[name])
		if err != nil {
			return nil, err
		}
		d := &stagedDir{path: famDir, entries: entries}
		d.index()
		t.fams[name] = d
	}
	t.files.index()
	t.setSizes(closed)
	return t, nil
}

// check compares the listed tree with m.Files: every listed file staged with its size, nothing else
// staged but side files (_manifest.json, _rejects.jsonl and other top-level names starting with "_"),
// no path listed twice. It reports every problem: a family's in name order, then the missing files.
// A file without a size at close is stat'ed now.
func (t *stagedTree) check(m *Manifest) error {
	for _, d := range t.fams {
		d.listed = slices.Repeat([]int{-1}, len(d.entries))
	}
	t.files.listed = slices.Repeat([]int{-1}, len(t.files.entries))
	var missing []int            // the files of m.Files that are not staged
	var unstaged map[string]bool // their paths (made when one is missing): a path listed twice
	var lastDir string
	var last *stagedDir
	for i := range m.Files {
		p := filepath.ToSlash(m.Files[i].Path)
		d, name := &t.files, p
		if k := strings.IndexByte(p, '/'); k >= 0 { // a deeper path names no listed file: no file's name holds a '/'
			if p[:k] != lastDir || last == nil {
				lastDir, last = p[:k], t.fams[p[:k]]
			}
			d, name = last, p[k+1:]
		}
		j, ok := -1, false
		if d != nil {
			j, ok = d.at[name]
		}
		if !ok {
			if unstaged[p] {
				return fmt.Errorf("%s listed twice", m.Files[i].Path)
			}
			if unstaged == nil {
				unstaged = map[string]bool{}
			}
			unstaged[p] = true
			missing = append(missing, i)
			continue
		}
		if d.listed[j] >= 0 {
			return fmt.Errorf("%s listed twice", m.Files[i].Path)
		}
		d.listed[j] = i
	}
	var problems []string
	// rel is the path of name in dir (a family, or "": the staging dir) relative to the staging dir.
	rel := func(dir string, name string) string {
		if dir == "" {
			return name
		}
		return dir + "/" + name
	}
	// checkFile checks the staged file entry j of d, the files of dir.
	checkFile := func(d *stagedDir, j int, dir string) error {
		i := d.listed[j]
		if i < 0 {
			problems = append(problems, rel(dir, d.entries[j].name)+": staged but not in the manifest")
			return nil
		}
		size := d.sizes[j]
		if size < 0 {
			fi, err := d.info(j)
			if err != nil {
				return err
			}
			size = fi.Size()
		}
		if size != m.Files[i].Bytes {
			problems = append(problems, fmt.Sprintf("%s: %d bytes, manifest says %d", rel(dir, d.entries[j].name), size, m.Files[i].Bytes))
		}
		return nil
	}
	for _, e := range t.top {
		name := e.Name()
		if !e.IsDir() {
			if j, ok := t.files.at[name]; ok {
				if err := checkFile(&t.files, j, ""); err != nil {
					return err
				}
			}
			continue
		}
		d := t.fams[name]
		before := len(problems)
		var names []string // the entry each problem found here is about (one problem at most per entry)
		for j, f := range d.entries {
			if f.dir {
				problems = append(problems, rel(name, f.name)+": unexpected sub-directory")
				names = append(names, f.name)
				continue
			}
			n := len(problems)
			if err := checkFile(d, j, name); err != nil {
				return err
			}
			if len(problems) > n {
				names = append(names, f.name)
			}
		}
		sortByNames(problems[before:], names)
	}
	texts := make([]string, len(missing))
	for k, i := range missing {
		texts[k] = filepath.ToSlash(m.Files[i].Path) + ": in the manifest but not staged"
	}
	sort.Strings(texts)
	problems = append(problems, texts...)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// closedSizes are the files whose sizes at close Staging.FileWritten heard of, in the order it heard of
// them. A list, not a map by family and name: it is appended to once per file, in the write workers,
// and read once, by listStaged, which looks each file up in its index of the listed names (setSizes);
// a map filled at every close cost ~540 instructions a file, for lookups the index answers as well.
type closedSizes []closedFile

// closedFile is family/name's size at its close.
type closedFile struct {
	family, name string
	size         int64
}

// put records the size of family/name.
func (c *closedSizes) put(family, name string, size int64) {
	if n := len(*c); n == cap(*c) {
		// The list doubles: append grows a long one by a quarter at a time, each time into fresh
		// memory, page faults and all.
		*c = slices.Grow(*c, max(n, 64))
	}
	*c = append(*c, closedFile{family: family, name: name, size: size})
}

// dirHint is what a directory is expected to hold: files, and their names' bytes in all.
type dirHint struct{ files, nameBytes int }

// hints returns what each family directory holds of the closed files (a family's dirHint, by name).
func (c closedSizes) hints() map[string]dirHint {
	hints := map[string]dirHint{}
	var fam string
	var h dirHint
	for i := range c {
		if f := &c[i]; f.family != fam {
			if i > 0 {
				hints[fam] = h
			}
			fam, h = f.family, hints[f.family]
		}
		h.files++
		h.nameBytes += len(c[i].name)
	}
	if len(c) > 0 {
		hints[fam] = h
	}
	return hints
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
