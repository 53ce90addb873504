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

	listing *stagedListing // the staging dir's listing, started by settle (nil: not yet)

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

// FileWritten tells the staging that the file Dir/<family>/<name> is complete, holding size bytes,
// the bytes the file system accepted for it (an engine.DirSink's Closed): the commit checks the
// manifest against that size instead of a stat of the file's path (verifyStaged). Every few hundred
// files it starts writing them back to the device in the background, which leaves the commit less to
// wait for. Safe for concurrent use.
func (s *Staging) FileWritten(family, name string, size int64) {
	s.sizesMu.Lock()
	s.sizes.put(family, name, size)
	s.sizesMu.Unlock()
	s.syncer.fileWritten()
}

// expectFiles makes room in the list of closed files for n files (at most maxExpectedFiles): a load
// that knows its regions says how many files it writes at least, instead of the list doubling its
// way there (~0.8 MB of fresh arrays for a 0.4 MB list at 10,000 files).
func (s *Staging) expectFiles(n int) {
	s.sizesMu.Lock()
	defer s.sizesMu.Unlock()
	if n = min(n, maxExpectedFiles); cap(s.sizes)-len(s.sizes) < n {
		s.sizes = slices.Grow(s.sizes, n)
	}
}

// maxExpectedFiles bounds the room expectFiles makes (~2.6 MB of the list's entries).
const maxExpectedFiles = 1 << 16

// settle starts, in the background, the part of the commit that needs no manifest: the staged files'
// writeback (stagingSyncer.start) and the listing of the staging dir with each file's size at close
// (listStaged). Call it once the load has put everything it stages in place; nothing may be written
// under Dir after it. The commit then waits for the device and the directory reads while the manifest
// is built, instead of after it: at 10,000 files, the listing's ~4 ms of CPU run on the other core, and
// the syncfs's ~5–10 ms wait overlaps them. Commit calls it if the load did not; a second call does
// nothing.
func (s *Staging) settle() {
	if s.listing != nil {
		return
	}
	s.sizesMu.Lock()
	sizes := s.sizes
	s.sizesMu.Unlock()
	s.syncer.start(s.dir)
	l := &stagedListing{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.tree, l.err = listStaged(s.dir, sizes)
	}()
	s.listing = l
}

// stagedListing is a listStaged running in the background.
type stagedListing struct {
	done chan struct{} // closed when tree and err are set
	tree *stagedTree
	err  error
}

// wait returns the listing once it is done.
func (l *stagedListing) wait() (*stagedTree, error) {
	<-l.done
	return l.tree, l.err
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
	if s.listing != nil {
		s.listing.wait() // its reads end before the directory is removed
	}
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
//     mismatch is a bug in the caller: nothing is committed), and encodes
//     the manifest meanwhile;
//  2. makes every staged file and directory durable (one syncfs on Linux
//     5.8+, else an fsync of each: stagingSyncer; started by settle, in the
//     background, while 1 runs);
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
	s.settle()
	// The staged files are checked against m while m is written (writeManifest): readers of m, both.
	checked := make(chan error, 1)
	go func() {
		t, err := s.listing.wait()
		if err == nil {
			err = t.check(m)
		}
		checked <- err
	}()
	f, werr := s.writeManifest(m)
	if err := <-checked; err != nil {
		if f != nil {
			f.Close()
		}
		return fmt.Errorf("commit: staged output does not match the manifest: %w", err)
	}
	if werr != nil {
		return werr
	}
	if err := s.syncer.wait(); err != nil {
		f.Close()
		return classify(ErrIO, fmt.Errorf("commit: %w", err))
	}
	// The manifest takes its name only now, durable, after the staged files: a staging dir with one is
	// a commit that recovery completes (recoverLocked).
	if err := syncClose(f); err != nil {
		return classify(ErrIO, fmt.Errorf("commit: %w", err))
	}
	if err := os.Rename(filepath.Join(s.dir, manifestPartial), filepath.Join(s.dir, ManifestName)); err != nil {
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

// manifestPartial is the name the manifest is written under in the staging dir until the commit has
// checked the staged files and waited for them to be durable (commit). Like every top-level name
// starting with "_" it is a side file to the listing (listStaged), and a staging dir holding it but
// no ManifestName is a crashed run's, which recovery removes.
const manifestPartial = "_manifest.json.partial"

// writeManifest writes m's text to manifestPartial in the staging dir, in pieces (Manifest.writeText),
// and returns the file, open: commit syncs it, closes it and gives it its name once the staged files
// are checked and durable. On error the file is closed (the staging dir goes with the run).
func (s *Staging) writeManifest(m *Manifest) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(s.dir, manifestPartial), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, classify(ErrIO, fmt.Errorf("commit: %w", err))
	}
	if err := m.writeText(f, manifestPiece); err != nil {
		f.Close()
		return nil, classify(ErrIO, fmt.Errorf("commit: manifest: %w", err))
	}
	return f, nil
}

// syncClose syncs f to the device and closes it.
func syncClose(f *os.File) error {
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeFileSync writes the parts of data, one after the other, to path (created or truncated) and
// fsyncs it.
func writeFileSync(path string, data ...[]byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	for _, part := range data {
		if _, err := f.Write(part); err != nil {
			f.Close()
			return err
		}
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
