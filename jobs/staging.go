package jobs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Output layout.
//
// One-off run (`hfload run --out DIR`, no state_dir): the output goes into
// DIR itself:
//
//	DIR/<family>/<hfile>          what completebulkload loads
//	DIR/_manifest.json            written last: present = complete
//	DIR/.hfload-staging-<run>/    only while a run writes (or after a crash)
//	DIR/.hfload.lock              only while a run writes
//
// Job run with state_dir: every run gets its own directory, so a cron job
// can load each run with completebulkload and keep history:
//
//	<out>/<job>/<run-id>/<family>/<hfile>
//	<out>/<job>/<run-id>/_manifest.json
//	<out>/<job>/.hfload-staging-<run-id>/   while writing
//
// Dot-prefixed names are illegal HBase family names, and completebulkload
// skips them (and plain files such as _manifest.json), so pointing it at DIR
// while a run writes, or after a crash, loads nothing partial.
const (
	StagingPrefix = ".hfload-staging-"
	OutLockName   = ".hfload.lock"
)

// NewRunID returns a run id that sorts by start second:
// "20261122T053000Z-1a2b3c4d" (UTC, then 32 random bits). Runs started within the same second sort in
// no particular order between themselves (what a run loads is decided by the job's state, not by these
// names).
func NewRunID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Staging is one run's private output directory next to its final place
// (same file system, so the commit is a rename). Write HFiles under
// FamilyDir(family), then Commit; on any failure call Abort (safe to defer
// unconditionally: it does nothing after a successful Commit).
//
// While it exists, a Staging holds the output lock (OutLockName in the
// directory that holds the staging dir), so two runs never write into the
// same output directory and never clean up each other's staging dirs.
type Staging struct {
	parent    string // holds the staging dir and the lock
	dir       string // the staging dir
	final     string // where the output ends up
	inPlace   bool   // one-off: move entries into final (== parent); job run: rename dir to final
	runID     string
	lock      *Lock
	recovered []string
	done      bool
	syncer    *stagingSyncer // makes the staged files durable at commit

	sizesMu sync.Mutex
	sizes   closedSizes // the files FileWritten heard of

	// afterMove, if set (tests only), runs after each entry is moved during
	// an in-place commit; it simulates a crash in the middle of a commit.
	afterMove func(name string)
}

// NewStaging prepares a one-off run into out (created if missing): it takes
// the output lock (ErrLocked if another run writes there), recovers what a
// crashed run left (see RecoverStaging), checks out holds no earlier load
// (ErrOutputExists: a _manifest.json or any directory not starting with
// '.'), and creates out/.hfload-staging-<runID>/.
func NewStaging(out, runID string) (*Staging, error) {
	return newStaging(out, runID, true)
}

// NewRunStaging prepares a job run whose output is parent/<runID>/ (parent
// is typically <out>/<job>): staging in parent/.hfload-staging-<runID>/,
// committed by renaming that directory to parent/<runID> in one step.
func NewRunStaging(parent, runID string) (*Staging, error) {
	return newStaging(parent, runID, false)
}

func newStaging(parent, runID string, inPlace bool) (*Staging, error) {
	if err := ValidJobName(runID); err != nil {
		return nil, classify(ErrConfig, fmt.Errorf("run id: %w", err))
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, classify(ErrIO, fmt.Errorf("output directory: %w", err))
	}
	lock, err := AcquireLock(filepath.Join(parent, OutLockName), "write "+parent)
	if err != nil {
		return nil, err
	}
	s := &Staging{parent: parent, runID: runID, inPlace: inPlace, lock: lock,
		dir: filepath.Join(parent, StagingPrefix+runID)}
	fail := func(err error) (*Staging, error) {
		_ = lock.Release()
		return nil, err
	}
	if s.recovered, err = recoverLocked(parent, inPlace); err != nil {
		return fail(err)
	}
	if inPlace {
		s.final = parent
		if err := checkEmptyOutput(parent); err != nil {
			return fail(err)
		}
	} else {
		s.final = filepath.Join(parent, runID)
		if _, err := os.Lstat(s.final); err == nil {
			return fail(fmt.Errorf("%w: %s already exists", ErrOutputExists, s.final))
		}
	}
	if err := os.Mkdir(s.dir, 0o755); err != nil {
		return fail(classify(ErrIO, fmt.Errorf("staging: %w", err)))
	}
	s.syncer = openStagingSyncer(s.dir)
	return s, nil
}

// checkEmptyOutput refuses an output directory that holds a committed load
// or any visible directory (completebulkload would load it too).
func checkEmptyOutput(dir string) error {
	if m, err := LoadManifest(dir); err == nil {
		return fmt.Errorf("%w: %s holds a committed load (run %s, finished %s); choose another --out or remove it",
			ErrOutputExists, dir, m.RunID, m.Finished.UTC().Format(time.RFC3339))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s has an unreadable %s: %w", ErrOutputExists, dir, ManifestName, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return classify(ErrIO, err)
	}
	var visible []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			visible = append(visible, e.Name())
		}
	}
	if len(visible) > 0 {
		return fmt.Errorf("%w: %s has directories completebulkload would load: %s", ErrOutputExists, dir, strings.Join(visible, ", "))
	}
	return nil
}

// Dir is the staging directory.
func (s *Staging) Dir() string { return s.dir }

// FileWritten tells the staging that the file Dir/<family>/<name> is complete, holding size bytes as
// the file system reported them at its close (an engine.DirSink's Closed): the commit checks the
// manifest against that size instead of a stat of the file's path (verifyStaged). Every few hundred
// files it starts writing them back to the device in the background, which leaves the commit less to
// wait for. Safe for concurrent use.
func (s *Staging) FileWritten(family, name string, size int64) {
	s.sizesMu.Lock()
	if s.sizes == nil {
		s.sizes = closedSizes{}
	}
	s.sizes.put(family, name, size)
	s.sizesMu.Unlock()
	s.syncer.fileWritten()
}

// Final is the directory the output has after Commit.
func (s *Staging) Final() string { return s.final }

// RunID is the run id the staging was created with.
func (s *Staging) RunID() string { return s.runID }

// Recovered describes what cleaning up after earlier crashed runs did
// (one line each), for the run's log.
func (s *Staging) Recovered() []string { return s.recovered }

// FamilyDir creates (if needed) and returns <staging>/<family>. The family
// name must be legal for HBase (ValidFamilyName).
func (s *Staging) FamilyDir(family string) (string, error) {
	if s.done {
		return "", errors.New("staging: already committed or aborted")
	}
	if err := ValidFamilyName(family); err != nil {
		return "", classify(ErrConfig, err)
	}
	d := filepath.Join(s.dir, family)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", classify(ErrIO, fmt.Errorf("staging: %w", err))
	}
	return d, nil
}

// Abort removes the staging directory and releases the output lock. It does
// nothing after Commit succeeded, so `defer s.Abort()` is the normal use.
func (s *Staging) Abort() error {
	if s.done {
		return nil
	}
	s.done = true
	s.syncer.close()
	err := os.RemoveAll(s.dir)
	if err == nil {
		err = syncDir(s.parent)
	}
	if e := s.lock.Release(); err == nil {
		err = e
	}
	if err != nil {
		return classify(ErrIO, fmt.Errorf("abort: %w", err))
	}
	return nil
}

// Commit makes the staged output final:
//  1. verifies the staged files are exactly m.Files with their sizes (a
//     mismatch is a bug in the caller: nothing is committed);
//  2. makes every staged file and directory durable (one syncfs on Linux
//     5.8+, else an fsync of each: stagingSyncer);
//  3. writes _manifest.json into the staging dir and fsyncs it — from here
//     on a crash is recovered forward by the next run (RecoverStaging);
//  4. one-off: renames each family directory into the output directory,
//     then _manifest.json last; job run: renames the staging directory to
//     parent/<run-id> in one step;
//  5. fsyncs the directories and releases the lock.
//
// m.Commands is filled for the final directory when empty. On failure the
// staging directory is removed (moves already made are undone) and the
// error returned; Commit is not retried.
func (s *Staging) Commit(m *Manifest) error {
	if s.done {
		return errors.New("staging: already committed or aborted")
	}
	if m.RunID == "" {
		m.RunID = s.runID
	}
	if len(m.Commands) == 0 {
		abs, err := filepath.Abs(s.final)
		if err != nil {
			abs = s.final
		}
		m.SetCommands(abs)
	}
	if m.ManifestVersion == 0 {
		m.ManifestVersion = ManifestVersion
	}
	err := s.commit(m)
	s.syncer.close()
	if err != nil {
		if s.done {
			// The output is in place; only durability or cleanup failed.
			_ = s.lock.Release()
		} else {
			_ = s.Abort()
		}
		return err
	}
	return nil
}

func (s *Staging) commit(m *Manifest) error {
	s.sizesMu.Lock()
	sizes := s.sizes
	s.sizesMu.Unlock()
	if err := verifyStaged(s.dir, m, sizes); err != nil {
		return fmt.Errorf("commit: staged output does not match the manifest: %w", err)
	}
	body, err := m.Marshal()
	if err != nil {
		return err
	}
	if err := s.syncer.sync(s.dir); err != nil {
		return classify(ErrIO, fmt.Errorf("commit: %w", err))
	}
	if err := writeFileSync(filepath.Join(s.dir, ManifestName), body); err != nil {
		return classify(ErrIO, fmt.Errorf("commit: %w", err))
	}
	if err := syncDir(s.dir); err != nil {
		return classify(ErrIO, fmt.Errorf("commit: %w", err))
	}
	if s.inPlace {
		if err := s.moveInto(); err != nil {
			return err
		}
	} else {
		if err := os.Rename(s.dir, s.final); err != nil {
			return classify(ErrIO, fmt.Errorf("commit: %w", err))
		}
		s.done = true // the output is in place; from here only durability is in doubt
		if err := syncDir(s.parent); err != nil {
			return classify(ErrIO, fmt.Errorf("commit: %w", err))
		}
	}
	s.done = true
	return s.lock.Release()
}

// moveInto moves the staged entries into the output directory, manifest
// last, undoing the moves if one fails.
func (s *Staging) moveInto() error {
	names, err := stagedEntries(s.dir)
	if err != nil {
		return classify(ErrIO, fmt.Errorf("commit: %w", err))
	}
	var moved []string
	undo := func(cause error) error {
		for i := len(moved) - 1; i >= 0; i-- {
			if e := os.Rename(filepath.Join(s.final, moved[i]), filepath.Join(s.dir, moved[i])); e != nil {
				return classify(ErrIO, fmt.Errorf("commit: %w; undoing the move of %s also failed: %w", cause, moved[i], e))
			}
		}
		return classify(ErrIO, fmt.Errorf("commit: %w", cause))
	}
	for _, name := range names {
		dst := filepath.Join(s.final, name)
		if _, err := os.Lstat(dst); err == nil {
			return undo(fmt.Errorf("%s already exists", dst))
		}
		if err := os.Rename(filepath.Join(s.dir, name), dst); err != nil {
			return undo(err)
		}
		moved = append(moved, name)
		if s.afterMove != nil {
			s.afterMove(name)
		}
	}
	if err := syncDir(s.final); err != nil {
		return undo(err)
	}
	if err := os.Rename(filepath.Join(s.dir, ManifestName), filepath.Join(s.final, ManifestName)); err != nil {
		return undo(err)
	}
	s.done = true // complete from here on: never undo
	if err := syncDir(s.final); err != nil {
		return classify(ErrIO, fmt.Errorf("commit: %w", err))
	}
	if err := os.Remove(s.dir); err != nil {
		return classify(ErrIO, fmt.Errorf("commit: removing staging dir: %w", err))
	}
	if err := syncDir(s.final); err != nil {
		return classify(ErrIO, fmt.Errorf("commit: %w", err))
	}
	return nil
}

// stagedEntries lists the staging dir's entries other than the manifest,
// sorted.
func stagedEntries(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Name() != ManifestName {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// verifyStaged checks that the files under the staging dir are exactly
// m.Files (relative paths <family>/<file>) with matching sizes. It reads the
// staging dir and each family dir once (no path joined or made relative per
// file: a run may stage tens of thousands of files). A file's size is the one
// in closed (FileWritten's; may be nil) if it is there: the file system's own figure, taken by fstat of the file's
// descriptor right before hfload closed it, after which nothing of the run
// writes it (the staging dir is the run's, under the output lock). Otherwise
// it is taken by a stat of the file now. The stat of every path was most of
// the commit's CPU at 10,000 files (~6–15 µs a file, serial, after the
// writing has ended; perf record); fstat at close costs ~1 µs, in the write
// workers.
func verifyStaged(dir string, m *Manifest, closed closedSizes) error {
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
	// check checks the staged file rel (family/name in the family's closed sizes, or a top-level file
	// with here nil).
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
				continue // side files such as _rejects.jsonl: completebulkload skips files under <out>
			}
			if err := check(append(rel[:0], name...), nil, name, e); err != nil {
				return err
			}
			continue
		}
		here := closed[name]
		files, err := readDirUnsorted(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		before := len(problems)
		var names []string // the entry each problem found here is about (one problem at most per entry)
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

// RecoverStaging cleans up after crashed runs in dir (an output directory,
// or <out>/<job> for job runs) under the output lock: a staging dir that
// already holds a _manifest.json crashed inside Commit after all data was
// durable, so its commit is completed; any other staging dir is removed. It
// returns one line per action. NewStaging and NewRunStaging call it.
func RecoverStaging(dir string, inPlace bool) ([]string, error) {
	lock, err := AcquireLock(filepath.Join(dir, OutLockName), "recover "+dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	return recoverLocked(dir, inPlace)
}

func recoverLocked(dir string, inPlace bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, classify(ErrIO, fmt.Errorf("recover: %w", err))
	}
	var notes []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), StagingPrefix) {
			continue
		}
		stg := filepath.Join(dir, e.Name())
		runID := strings.TrimPrefix(e.Name(), StagingPrefix)
		if _, err := os.Stat(filepath.Join(stg, ManifestName)); err == nil {
			if err := rollForward(dir, stg, runID, inPlace); err != nil {
				return notes, classify(ErrIO, fmt.Errorf("completing the interrupted commit of run %s: %w", runID, err))
			}
			notes = append(notes, fmt.Sprintf("completed the interrupted commit of run %s", runID))
			continue
		}
		if err := os.RemoveAll(stg); err != nil {
			return notes, classify(ErrIO, fmt.Errorf("removing staging dir of crashed run %s: %w", runID, err))
		}
		notes = append(notes, fmt.Sprintf("removed the staging dir of crashed run %s", runID))
	}
	if len(notes) > 0 {
		if err := syncDir(dir); err != nil {
			return notes, classify(ErrIO, fmt.Errorf("recover: %w", err))
		}
	}
	return notes, nil
}

func rollForward(dir, stg, runID string, inPlace bool) error {
	if !inPlace {
		final := filepath.Join(dir, runID)
		if _, err := os.Lstat(final); err == nil {
			return fmt.Errorf("%s already exists", final)
		}
		return os.Rename(stg, final)
	}
	names, err := stagedEntries(stg)
	if err != nil {
		return err
	}
	for _, name := range names {
		dst := filepath.Join(dir, name)
		if _, err := os.Lstat(dst); err == nil {
			return fmt.Errorf("%s already exists", dst)
		}
		if err := os.Rename(filepath.Join(stg, name), dst); err != nil {
			return err
		}
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(stg, ManifestName), filepath.Join(dir, ManifestName)); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	return os.Remove(stg)
}

// syncTree fsyncs every file and directory under root (root included).
func syncTree(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("fsync %s: %w", p, err)
		}
		return f.Close()
	})
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return f.Close()
}

// writeFileSync writes data to path (created or truncated) and fsyncs it.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeFileAtomic writes data to a temporary file next to path, fsyncs it,
// renames it over path and fsyncs the directory.
func writeFileAtomic(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := writeFileSync(tmp, data); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}
