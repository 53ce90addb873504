package jobs

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestStagedTreeCheckAgrees runs the check on random staged trees and manifests against the one-pass
// check it replaced (verifyStagedReference, which builds a map of the manifest's paths and looks every
// staged file up in it): the same error, or none, for trees with missing, unlisted and resized files,
// sub-directories, stray and side files at the top, sizes at close for some files, and manifests with
// paths listed twice and paths of other shapes ("/x", "a/b/c", "d/", a top-level name).
func TestStagedTreeCheckAgrees(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 150; round++ {
		dir := t.TempDir()
		closed := map[string]map[string]int64{} // the reference's: family → name → size at close
		var list closedSizes                    // verifyStaged's: the same sizes as FileWritten reports them
		var m Manifest
		faults := round%3 != 0 // else every file staged as listed, with its size
		odd := func(n int) bool { return faults && rng.Intn(n) == 0 }
		write := func(rel string, size int) {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for f, nf := 0, 1+rng.Intn(3); f < nf; f++ {
			fam := fmt.Sprintf("f%d", f)
			if err := os.MkdirAll(filepath.Join(dir, fam), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, k := range rng.Perm(40)[:rng.Intn(30)] {
				name := fmt.Sprintf("h%02d", k)
				rel := fam + "/" + name
				size := rng.Intn(3)
				if odd(15) {
					if err := os.MkdirAll(filepath.Join(dir, fam, name), 0o755); err != nil {
						t.Fatal(err)
					}
				} else if !odd(12) { // else: listed, never staged
					write(rel, size)
					if rng.Intn(2) == 0 {
						if closed[fam] == nil {
							closed[fam] = map[string]int64{}
						}
						closed[fam][name] = int64(size)
						if odd(10) {
							closed[fam][name] += 5 // not the size on disk
						}
						if rng.Intn(5) == 0 {
							list.put(fam, name, int64(size)+3) // reported again below: the later size counts
						}
						list.put(fam, name, closed[fam][name])
					} else if rng.Intn(8) == 0 {
						list.put("gone", name, 1) // a family not staged: no file takes it
					}
				}
				if !odd(10) { // else: staged, not listed
					bytes := int64(size)
					if odd(12) {
						bytes++
					}
					m.Files = append(m.Files, OutputFile{Family: fam, Path: rel, Bytes: bytes})
				}
			}
		}
		if odd(4) {
			write("stray", 1)
		}
		write("_rejects.jsonl", 2)
		write(ManifestName, 2)
		for _, p := range []string{"/f0", "f0/a/b", "f0/", "stray", "_rejects.jsonl", "x/y"} {
			if odd(8) {
				m.Files = append(m.Files, OutputFile{Path: p, Bytes: 1})
			}
		}
		if len(m.Files) > 0 && rng.Intn(6) == 0 {
			m.Files = append(m.Files, m.Files[rng.Intn(len(m.Files))])
		}
		rng.Shuffle(len(m.Files), func(i, j int) { m.Files[i], m.Files[j] = m.Files[j], m.Files[i] })
		list = interleaveFamilies(rng, list)
		want := fmt.Sprint(verifyStagedReference(dir, &m, closed))
		if got := fmt.Sprint(verifyStaged(dir, &m, list)); got != want {
			t.Fatalf("round %d: got %s\nwant %s", round, got, want)
		}
	}
}

// osReadDirUnsorted is readDirUnsorted as it was with os.File.ReadDir (a9692df), for the reference.
func osReadDirUnsorted(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// interleaveFamilies merges the reports of each family in list at random, each family's in their order.
func interleaveFamilies(rng *rand.Rand, list closedSizes) closedSizes {
	var fams []closedSizes
	at := map[string]int{}
	for _, c := range list {
		k, ok := at[c.family]
		if !ok {
			k = len(fams)
			at[c.family] = k
			fams = append(fams, nil)
		}
		fams[k] = append(fams[k], c)
	}
	var out closedSizes
	for len(out) < len(list) {
		if k := rng.Intn(len(fams)); len(fams[k]) > 0 {
			out, fams[k] = append(out, fams[k][0]), fams[k][1:]
		}
	}
	return out
}

// verifyStagedReference is the check as it was before the listing was indexed (a9692df), verbatim but
// for its name, the listing it reads itself with os.File.ReadDir (osReadDirUnsorted) and the sizes at close as the map by family and name they
// were kept in then.
func verifyStagedReference(dir string, m *Manifest, closed map[string]map[string]int64) error {
	want := make(map[string]int, len(m.Files))
	for i, f := range m.Files {
		if _, dup := want[filepath.ToSlash(f.Path)]; dup {
			return fmt.Errorf("%s listed twice", f.Path)
		}
		want[filepath.ToSlash(f.Path)] = i
	}
	seen := make([]bool, len(m.Files))
	var problems []string
	check := func(rel []byte, here map[string]int64, name string, d fs.DirEntry) error {
		i, ok := want[string(rel)]
		if !ok || seen[i] {
			problems = append(problems, string(rel)+": staged but not in the manifest")
			return nil
		}
		seen[i] = true
		size := m.Files[i].Bytes
		got, ok := here[name]
		if !ok {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			got = fi.Size()
		}
		if got != size {
			problems = append(problems, fmt.Sprintf("%s: %d bytes, manifest says %d", rel, got, size))
		}
		return nil
	}
	var rel []byte
	top, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range top {
		name := e.Name()
		if !e.IsDir() {
			if name == ManifestName || strings.HasPrefix(name, "_") {
				continue
			}
			if err := check(append(rel[:0], name...), nil, name, e); err != nil {
				return err
			}
			continue
		}
		here := closed[name]
		files, err := osReadDirUnsorted(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		before := len(problems)
		var names []string
		for _, f := range files {
			rel = append(append(append(rel[:0], name...), '/'), f.Name()...)
			if f.IsDir() {
				problems = append(problems, string(rel)+": unexpected sub-directory")
				names = append(names, f.Name())
				continue
			}
			n := len(problems)
			if err := check(rel, here, f.Name(), f); err != nil {
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

// closedSizes.put keeps every size in order and doubles the list: 10,000 files move it to a new array
// at most a dozen times (append's quarter steps take about twenty).
func TestClosedSizesPutDoubles(t *testing.T) {
	var c closedSizes
	moves := 0
	for i := range 10000 {
		before := cap(c)
		c.put("d", strconv.Itoa(i), int64(i))
		if cap(c) != before {
			moves++
		}
	}
	for i, f := range c {
		if f.family != "d" || f.name != strconv.Itoa(i) || f.size != int64(i) {
			t.Fatalf("entry %d is %+v", i, f)
		}
	}
	if len(c) != 10000 || moves > 12 {
		t.Fatalf("%d entries, the list moved %d times", len(c), moves)
	}
}
