package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// State directory layout (state_dir may be shared by several jobs):
//
//	<state_dir>/<job>/lock                    flock'd while a run is active (holder JSON inside)
//	<state_dir>/<job>/runs/<run-id>.json      one RunRecord per committed run
//	<state_dir>/<job>/runs/<run-id>.pending   written just before Commit
//
// A run writes its pending record before it commits and turns it into
// <run-id>.json after. If it dies in between, the next run (under the lock)
// looks at the pending record's output: a _manifest.json with that run id
// means the commit happened and the record is completed; otherwise the
// pending record is dropped. So state is recorded exactly for committed
// runs, and a failed run leaves state unchanged.
type State struct {
	dir string // <state_dir>/<job>
	job string
}

// RunRecord is what the state remembers of one committed run.
type RunRecord struct {
	RunID     string      `json:"run_id"`
	Job       string      `json:"job"`
	Started   time.Time   `json:"started"`
	Finished  time.Time   `json:"finished"`
	Inputs    []InputFile `json:"inputs"`  // loaded by this run
	Skipped   []string    `json:"skipped"` // inputs seen but already loaded
	Watermark *Watermark  `json:"watermark,omitempty"`
	Output    string      `json:"output"` // the committed output directory
	Counts    Counts      `json:"counts"`
}

// OpenState opens (creating) the state of job under stateDir. It reads
// nothing yet; it is safe to open while a run is active (Runs ignores
// pending records).
func OpenState(stateDir, job string) (*State, error) {
	if err := ValidJobName(job); err != nil {
		return nil, classify(ErrConfig, fmt.Errorf("job name: %w", err))
	}
	if stateDir == "" {
		return nil, classify(ErrConfig, errors.New("state_dir is empty"))
	}
	dir := filepath.Join(stateDir, job)
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		return nil, classify(ErrIO, fmt.Errorf("state: %w", err))
	}
	return &State{dir: dir, job: job}, nil
}

// Dir is <state_dir>/<job>.
func (s *State) Dir() string { return s.dir }

// LockPath is the job's lock file.
func (s *State) LockPath() string { return filepath.Join(s.dir, "lock") }

// Lock takes the job's lock (ErrLocked naming the holder if another run has
// it) and then settles what a crashed run left: pending records whose output
// was committed become records, others are removed. notes describe what was
// settled, for the run's log.
func (s *State) Lock(purpose string) (lock *Lock, notes []string, err error) {
	return s.LockContext(context.Background(), purpose)
}

// LockContext is Lock with a context for reading the manifests of outputs in a bucket.
func (s *State) LockContext(ctx context.Context, purpose string) (lock *Lock, notes []string, err error) {
	lock, err = AcquireLock(s.LockPath(), purpose)
	if err != nil {
		return nil, nil, err
	}
	if prev := lock.Previous(); prev != nil {
		notes = append(notes, fmt.Sprintf("took over the lock of a crashed run (%s)", prev))
	}
	more, err := s.settlePending(ctx)
	notes = append(notes, more...)
	if err != nil {
		lock.Release()
		return nil, notes, err
	}
	return lock, notes, nil
}

func (s *State) runsDir() string { return filepath.Join(s.dir, "runs") }

func (s *State) settlePending(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(s.runsDir())
	if err != nil {
		return nil, classify(ErrIO, fmt.Errorf("state: %w", err))
	}
	var notes []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".pending") {
			continue
		}
		p := filepath.Join(s.runsDir(), e.Name())
		rec, err := readRecord(p)
		if err == nil && rec.Output != "" {
			m, merr := loadOutputManifest(ctx, rec.Output)
			if merr != nil && !errors.Is(merr, fs.ErrNotExist) {
				// Unreadable is not absent: dropping the record of a committed run would load its
				// inputs again.
				return notes, classify(ErrIO, fmt.Errorf("state: run %s: %w", rec.RunID, merr))
			}
			if merr == nil && m.RunID == rec.RunID {
				rec.Finished = m.Finished
				rec.Counts = m.Counts
				if rec.Watermark == nil {
					rec.Watermark = m.Watermark
				}
				if err := s.Record(rec); err != nil {
					return notes, err
				}
				notes = append(notes, fmt.Sprintf("recorded run %s, which committed %s but crashed before recording it", rec.RunID, rec.Output))
				continue
			}
		}
		if err := os.Remove(p); err != nil {
			return notes, classify(ErrIO, fmt.Errorf("state: %w", err))
		}
		notes = append(notes, fmt.Sprintf("dropped the pending record of uncommitted run %s", strings.TrimSuffix(e.Name(), ".pending")))
	}
	return notes, nil
}

// Begin writes the pending record of a run about to commit (call it under
// the lock, right before Staging.Commit, with Output = Staging.Final()).
func (s *State) Begin(rec RunRecord) error {
	if err := ValidJobName(rec.RunID); err != nil {
		return classify(ErrConfig, fmt.Errorf("run id: %w", err))
	}
	rec.Job = s.job
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(s.runsDir(), rec.RunID+".pending"), append(b, '\n')); err != nil {
		return classify(ErrIO, fmt.Errorf("state: %w", err))
	}
	return nil
}

// Record stores a committed run (call it only after Commit succeeded) and
// removes its pending record.
func (s *State) Record(rec RunRecord) error {
	if err := ValidJobName(rec.RunID); err != nil {
		return classify(ErrConfig, fmt.Errorf("run id: %w", err))
	}
	rec.Job = s.job
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(s.runsDir(), rec.RunID+".json"), append(b, '\n')); err != nil {
		return classify(ErrIO, fmt.Errorf("state: %w", err))
	}
	if err := os.Remove(filepath.Join(s.runsDir(), rec.RunID+".pending")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return classify(ErrIO, fmt.Errorf("state: %w", err))
	}
	return syncDir(s.runsDir())
}

func readRecord(path string) (RunRecord, error) {
	var rec RunRecord
	b, err := os.ReadFile(path)
	if err != nil {
		return rec, fmt.Errorf("state: %w", err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("state: %s: %w", path, err)
	}
	return rec, nil
}

// Runs lists the committed runs, oldest first (by start time, then run id).
func (s *State) Runs() ([]RunRecord, error) {
	entries, err := os.ReadDir(s.runsDir())
	if err != nil {
		return nil, classify(ErrIO, fmt.Errorf("state: %w", err))
	}
	var runs []RunRecord
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		rec, err := readRecord(filepath.Join(s.runsDir(), e.Name()))
		if err != nil {
			return nil, err
		}
		runs = append(runs, rec)
	}
	sort.Slice(runs, func(i, k int) bool {
		if !runs[i].Started.Equal(runs[k].Started) {
			return runs[i].Started.Before(runs[k].Started)
		}
		return runs[i].RunID < runs[k].RunID
	})
	return runs, nil
}

// LastWatermark is the watermark of the latest run that recorded one (nil if
// none): an incremental run loads rows above it.
func (s *State) LastWatermark() (*Watermark, error) {
	runs, err := s.Runs()
	if err != nil {
		return nil, err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Watermark != nil && runs[i].Watermark.Value != "" {
			w := *runs[i].Watermark
			return &w, nil
		}
	}
	return nil, nil
}

// Plan is what a run will do with its inputs.
type Plan struct {
	Load    []InputFile   // new inputs (and, with reload, changed ones), fingerprinted with checksums
	Skip    []SkippedFile // already loaded with the same content
	Changed []ChangedFile // loaded before, content differs (an error unless reload)
	// Watermark is the last recorded high-water mark (nil if none).
	Watermark *Watermark
}

// SkippedFile is an input an earlier run already loaded.
type SkippedFile struct {
	InputFile
	LoadedBy string `json:"loaded_by"` // run id
}

// ChangedFile is an input whose content differs from when it was loaded.
type ChangedFile struct {
	Now      InputFile `json:"now"`
	Loaded   InputFile `json:"loaded"`
	LoadedBy string    `json:"loaded_by"`
}

// NoOp reports that every input was already loaded: nothing to do. The
// command prints Summary and exits 0.
func (p *Plan) NoOp() bool { return len(p.Load) == 0 }

// Summary is one line for the log: "load 2 new files, skip 5 already loaded".
func (p *Plan) Summary() string {
	if p.NoOp() && len(p.Skip) == 0 {
		return "nothing to do: no inputs"
	}
	if p.NoOp() {
		return fmt.Sprintf("nothing to do: all %d inputs were already loaded (latest by run %s)", len(p.Skip), p.latestSkipRun())
	}
	reloads := 0
	for _, l := range p.Load {
		for _, c := range p.Changed {
			if c.Now.Path == l.Path {
				reloads++
			}
		}
	}
	files := "files"
	if len(p.Load) == 1 {
		files = "file"
	}
	s := fmt.Sprintf("load %d %s (%d new", len(p.Load), files, len(p.Load)-reloads)
	if reloads > 0 {
		s += fmt.Sprintf(", %d changed since loaded: reloading", reloads)
	}
	s += ")"
	if len(p.Skip) > 0 {
		s += fmt.Sprintf(", skip %d already loaded", len(p.Skip))
	}
	return s
}

func (p *Plan) latestSkipRun() string {
	latest := ""
	for _, s := range p.Skip {
		if s.LoadedBy > latest {
			latest = s.LoadedBy
		}
	}
	if latest == "" {
		return "none"
	}
	return latest
}

// Plan decides what to do with inputs (file paths, already expanded from
// globs; "-" and other non-regular files cannot be tracked and are errors):
// an input loaded before with the same content is skipped; a new one is
// loaded; one whose content changed is an error wrapping ErrInputChanged
// unless reload, which loads it again. Paths are compared after
// filepath.Abs.
//
// Content: if size and mtime match the record the file is taken as
// unchanged without reading it (like make and rsync); if the size differs it
// changed; if only the mtime differs its SHA-256 decides (touch is not a
// change). New and changed files are hashed for the record.
func (s *State) Plan(ctx context.Context, inputs []string, reload bool) (*Plan, error) {
	runs, err := s.Runs()
	if err != nil {
		return nil, err
	}
	type loaded struct {
		in  InputFile
		run string
	}
	last := map[string]loaded{}
	for _, r := range runs {
		for _, in := range r.Inputs {
			last[in.Path] = loaded{in, r.RunID}
		}
	}
	p := &Plan{}
	if p.Watermark, err = s.LastWatermark(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, path := range inputs {
		if path == "-" {
			return nil, classify(ErrConfig, errors.New("stdin cannot be loaded incrementally (it has no identity to remember)"))
		}
		abs, err := absInput(path)
		if err != nil {
			return nil, classify(ErrIO, fmt.Errorf("%s: %w", path, err))
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		now, err := Fingerprint(ctx, abs, false)
		if err != nil {
			return nil, classify(ErrIO, err)
		}
		prev, wasLoaded := last[abs]
		if wasLoaded && prev.in.Size == now.Size && prev.in.MTime.Equal(now.MTime) && prev.in.ETag == now.ETag {
			p.Skip = append(p.Skip, SkippedFile{InputFile: prev.in, LoadedBy: prev.run})
			continue
		}
		if now.Checksum, err = ChecksumFile(ctx, abs); err != nil {
			return nil, classify(ErrIO, err)
		}
		switch {
		case !wasLoaded:
			p.Load = append(p.Load, now)
		case now.SameContent(prev.in):
			// Touched, same bytes: skip, remembering the original fingerprint.
			p.Skip = append(p.Skip, SkippedFile{InputFile: prev.in, LoadedBy: prev.run})
		default:
			p.Changed = append(p.Changed, ChangedFile{Now: now, Loaded: prev.in, LoadedBy: prev.run})
			if reload {
				p.Load = append(p.Load, now)
			}
		}
	}
	if len(p.Changed) > 0 && !reload {
		var lines []string
		for _, c := range p.Changed {
			lines = append(lines, fmt.Sprintf("%s: loaded by run %s as %d bytes, mtime %s; now %d bytes, mtime %s",
				c.Now.Path, c.LoadedBy, c.Loaded.Size, c.Loaded.MTime.Format(time.RFC3339), c.Now.Size, c.Now.MTime.Format(time.RFC3339)))
		}
		return p, fmt.Errorf("%w (rerun with --reload to load them again):\n  %s", ErrInputChanged, strings.Join(lines, "\n  "))
	}
	return p, nil
}

// WriteRuns prints runs as an aligned table for `hfload runs JOB.yaml`, one
// line per run, oldest first, with a header; "no runs recorded" when empty.
func WriteRuns(w io.Writer, runs []RunRecord) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "no runs recorded")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "RUN\tSTARTED\tSECONDS\tLOADED\tSKIPPED\tROWS READ\tFILTERED\tREJECTED\tCELLS\tFILES\tBYTES\tWATERMARK\t")
	for _, r := range runs {
		wm := "-"
		if r.Watermark != nil && r.Watermark.Value != "" {
			wm = r.Watermark.Value
		}
		secs := "-"
		if !r.Finished.IsZero() && !r.Started.IsZero() {
			secs = strconv.FormatFloat(r.Finished.Sub(r.Started).Seconds(), 'f', 1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", r.RunID, r.Started.UTC().Format(time.RFC3339), secs,
			len(r.Inputs), len(r.Skipped), r.Counts.RowsRead, r.Counts.RowsFiltered, r.Counts.RowsRejected, r.Counts.CellsWritten,
			r.Counts.FilesWritten, FormatSize(r.Counts.BytesWritten), wm)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write runs: %w", err)
	}
	return nil
}
