package jobs

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stageFiles writes files (relative path → content) under the staging dir
// and returns a manifest that lists them.
func stageFiles(t *testing.T, s *Staging, files map[string]string) *Manifest {
	t.Helper()
	m := &Manifest{Tool: "hfload", ToolVersion: "test", RunID: s.RunID(), Table: "t",
		Started: time.Unix(1700000000, 0).UTC(), Finished: time.Unix(1700000100, 0).UTC()}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fam, _, _ := strings.Cut(p, "/")
		d, err := s.FamilyDir(fam)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, filepath.Base(p)), []byte(files[p]), 0o644); err != nil {
			t.Fatal(err)
		}
		n := int64(len(files[p]))
		m.Files = append(m.Files, OutputFile{Family: fam, Path: p, Cells: 1, Bytes: n})
		m.Counts.CellsWritten++
		m.Counts.BytesWritten += n
	}
	m.Counts.FilesWritten = int64(len(m.Files))
	m.Counts.RowsRead, m.Counts.RowsKeyed, m.Counts.RowsWritten, m.Counts.CellsEmitted = 1, 1, 1, m.Counts.CellsWritten
	return m
}

// visible lists entries under dir (recursively) whose names do not start
// with '.', i.e. what completebulkload or a user would see.
func visible(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestOneOffCommit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	s, err := NewStaging(out, "run1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	if s.Final() != out || !strings.HasPrefix(filepath.Base(s.Dir()), ".hfload-staging-") || filepath.Dir(s.Dir()) != out {
		t.Fatalf("layout: dir %s final %s", s.Dir(), s.Final())
	}
	m := stageFiles(t, s, map[string]string{"d/f1": "hello", "d/f2": "x", "m/f3": "world!"})
	if got := visible(t, out); len(got) != 0 {
		t.Fatalf("before commit, visible: %v", got)
	}
	if err := s.Commit(m); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(visible(t, out), " "), "_manifest.json d d/f1 d/f2 m m/f3"; got != want {
		t.Errorf("after commit: %s, want %s", got, want)
	}
	if got := entries(t, out); len(got) != 3 {
		t.Errorf("staging dir or lock left behind: %v", got)
	}
	back, err := LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if back.RunID != "run1" || len(back.Files) != 3 || back.ManifestVersion != ManifestVersion {
		t.Errorf("manifest: %+v", back)
	}
	abs, _ := filepath.Abs(out)
	if len(back.Commands) != 2 || back.Commands[0] != "hbase completebulkload "+abs+" t" {
		t.Errorf("commands: %q", back.Commands)
	}
	if err := back.Reconcile(); err != nil {
		t.Error(err)
	}
	if err := s.Abort(); err != nil || len(visible(t, out)) != 6 {
		t.Errorf("Abort after Commit changed something: %v", err)
	}
	// A second run into the same directory is refused.
	_, err = NewStaging(out, "run2")
	if !errors.Is(err, ErrOutputExists) || !strings.Contains(err.Error(), "run run1") {
		t.Errorf("second run into a committed out: %v", err)
	}
}

func TestRunCommitIsOneRename(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "out", "nightly")
	s, err := NewRunStaging(parent, "20261122T050000Z-00000001")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	if s.Final() != filepath.Join(parent, "20261122T050000Z-00000001") {
		t.Fatalf("final = %s", s.Final())
	}
	m := stageFiles(t, s, map[string]string{"d/a": "1"})
	if err := s.Commit(m); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(visible(t, parent), " "); got != "20261122T050000Z-00000001 20261122T050000Z-00000001/_manifest.json 20261122T050000Z-00000001/d 20261122T050000Z-00000001/d/a" {
		t.Errorf("after commit: %s", got)
	}
	if got := entries(t, parent); len(got) != 1 {
		t.Errorf("leftovers: %v", got)
	}
	if _, err := NewRunStaging(parent, "20261122T050000Z-00000001"); !errors.Is(err, ErrOutputExists) {
		t.Errorf("same run id twice: %v", err)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	s, err := NewStaging(out, "r1")
	if err != nil {
		t.Fatal(err)
	}
	stageFiles(t, s, map[string]string{"d/f": "data"})
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, out); len(got) != 0 {
		t.Errorf("after abort: %v", got)
	}
	if _, err := s.FamilyDir("d"); err == nil {
		t.Error("FamilyDir after Abort: no error")
	}
	if err := s.Commit(&Manifest{}); err == nil {
		t.Error("Commit after Abort: no error")
	}
	// The lock is free again.
	s2, err := NewStaging(out, "r2")
	if err != nil {
		t.Fatal(err)
	}
	s2.Abort()
}

func TestCommitRefusesMismatchedManifest(t *testing.T) {
	cases := []func(m *Manifest){
		func(m *Manifest) { m.Files = m.Files[:1] },
		func(m *Manifest) { m.Files = append(m.Files, OutputFile{Family: "d", Path: "d/ghost", Bytes: 1}) },
		func(m *Manifest) { m.Files[0].Bytes++ },
	}
	for i, mod := range cases {
		out := filepath.Join(t.TempDir(), "out")
		s, err := NewStaging(out, "r")
		if err != nil {
			t.Fatal(err)
		}
		m := stageFiles(t, s, map[string]string{"d/f1": "abc", "d/f2": "de"})
		mod(m)
		err = s.Commit(m)
		if err == nil || !strings.Contains(err.Error(), "does not match the manifest") {
			t.Errorf("case %d: %v", i, err)
		}
		if got := entries(t, out); len(got) != 0 {
			t.Errorf("case %d: left %v", i, got)
		}
	}
}

// TestCommitAfterSettle: settle, called when the load has staged everything and before the manifest
// is built (loadStaged), lists the staged tree and starts its writeback; the commit checks the manifest
// against that listing (every kind of mismatch still refuses the commit and leaves nothing), a second
// settle changes nothing, and an Abort after settle waits for the listing and removes everything.
func TestCommitAfterSettle(t *testing.T) {
	cases := []func(m *Manifest){
		func(m *Manifest) {},
		func(m *Manifest) { m.Files = m.Files[:1] },
		func(m *Manifest) { m.Files = append(m.Files, OutputFile{Family: "d", Path: "d/ghost", Bytes: 1}) },
		func(m *Manifest) { m.Files[0].Bytes++ },
		func(m *Manifest) { m.Files = append(m.Files, m.Files[1]) },
	}
	for i, mod := range cases {
		out := filepath.Join(t.TempDir(), "out")
		s, err := NewStaging(out, "r")
		if err != nil {
			t.Fatal(err)
		}
		m := stageFiles(t, s, map[string]string{"d/f1": "abc", "d/f2": "de", "e/f3": "f"})
		s.FileWritten("d", "f1", 3)
		s.settle()
		l := s.listing
		s.settle()
		if s.listing != l {
			t.Fatalf("case %d: a second settle listed again", i)
		}
		mod(m)
		err = s.Commit(m)
		if i == 0 {
			if err != nil {
				t.Fatalf("matching manifest: %v", err)
			}
			if got, want := visible(t, out), []string{"_manifest.json", "d", "d/f1", "d/f2", "e", "e/f3"}; !slices.Equal(got, want) {
				t.Fatalf("committed %v, want %v", got, want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "does not match the manifest") {
			t.Errorf("case %d: %v", i, err)
		}
		if got := entries(t, out); len(got) != 0 {
			t.Errorf("case %d: left %v", i, got)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	s, err := NewStaging(out, "r")
	if err != nil {
		t.Fatal(err)
	}
	stageFiles(t, s, map[string]string{"d/f1": "abc"})
	s.settle()
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, out); len(got) != 0 {
		t.Errorf("abort after settle left %v", got)
	}
}

// writeFileSync writes its parts one after the other, over what the file held.
func TestWriteFileSyncParts(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("an older and longer content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeFileSync(p, []byte("ab"), nil, []byte("c"), []byte("def")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "abcdef" {
		t.Fatalf("got %q, %v; want abcdef", got, err)
	}
}

// TestCommitChecksSizesAtClose: the commit checks the manifest against the size each file had at its
// close (FileWritten), where it heard of one.
func TestCommitChecksSizesAtClose(t *testing.T) {
	for _, size := range []int64{3, 4} {
		out := filepath.Join(t.TempDir(), "out")
		s, err := NewStaging(out, "r")
		if err != nil {
			t.Fatal(err)
		}
		m := stageFiles(t, s, map[string]string{"d/f1": "abc", "d/f2": "de"})
		s.FileWritten("d", "f1", size)
		err = s.Commit(m)
		if size == 3 && err != nil {
			t.Errorf("sizes match: %v", err)
		}
		if size == 4 && (err == nil || !strings.Contains(err.Error(), "d/f1: 4 bytes, manifest says 3")) {
			t.Errorf("size at close 4, manifest 3: %v", err)
		}
	}
}

func TestUncommittedRunIsInvisibleAndCleanedUp(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	s, err := NewStaging(out, "crashed")
	if err != nil {
		t.Fatal(err)
	}
	stageFiles(t, s, map[string]string{"d/f": "partial"})
	// Simulate a crash: the process is gone (the kernel drops the flock),
	// nothing else happens.
	s.lock.f.Close()
	if got := visible(t, out); len(got) != 0 {
		t.Fatalf("crashed run is visible: %v", got)
	}
	s2, err := NewStaging(out, "next")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Abort()
	if len(s2.Recovered()) != 1 || !strings.Contains(s2.Recovered()[0], "removed the staging dir of crashed run crashed") {
		t.Errorf("recovered: %q", s2.Recovered())
	}
	if err := s2.Commit(stageFiles(t, s2, map[string]string{"d/g": "ok"})); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(visible(t, out), " "); got != "_manifest.json d d/g" {
		t.Errorf("after rerun: %s", got)
	}
}

func TestConcurrentStagingRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	s, err := NewStaging(out, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	_, err = NewStaging(out, "b")
	if !errors.Is(err, ErrLocked) || ExitCode(err) != ExitLocked || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second writer: %v", err)
	}
	// The first run's staging dir survives the refused second run.
	if _, err := os.Stat(s.Dir()); err != nil {
		t.Error(err)
	}
}

func TestOutputWithForeignDirectoryRefused(t *testing.T) {
	out := t.TempDir()
	os.Mkdir(filepath.Join(out, "d"), 0o755)
	os.WriteFile(filepath.Join(out, "notes.txt"), nil, 0o644) // plain files are fine
	if _, err := NewStaging(out, "r"); !errors.Is(err, ErrOutputExists) || !strings.Contains(err.Error(), ": d") {
		t.Errorf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, OutLockName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock file left after refusal: %v", err)
	}
}

func TestFamilyDirRejectsIllegalNames(t *testing.T) {
	s, err := NewStaging(t.TempDir(), "r")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	for _, f := range []string{"", ".x", "a/b", "a:b", "recovered.edits"} {
		if _, err := s.FamilyDir(f); err == nil {
			t.Errorf("FamilyDir(%q): no error", f)
		}
	}
}

// Subprocess tests: the test binary re-executes itself with
// HFLOAD_JOBS_HELPER set, does the work described there, and is SIGKILLed.

const helperEnv = "HFLOAD_JOBS_HELPER"

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for subprocess tests")
	}
	dir := os.Getenv("HFLOAD_JOBS_DIR")
	switch mode {
	case "write": // write forever into a staged file
		s, err := NewStaging(dir, "killed")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		d, _ := s.FamilyDir("d")
		f, _ := os.Create(filepath.Join(d, "hfile"))
		buf := make([]byte, 64<<10)
		for i := 0; ; i++ {
			f.Write(buf)
			if i == 4 {
				fmt.Println("writing")
			}
			time.Sleep(time.Millisecond)
		}
	case "commit": // die after the first family moved during Commit
		s, err := NewStaging(dir, "halfway")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		m := stageFiles(t, s, map[string]string{"a/1": "aaa", "b/2": "bb", "c/3": "c"})
		s.afterMove = func(name string) {
			fmt.Println("moved", name)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Hour)
		}
		s.Commit(m)
	case "lock": // hold the job lock until killed
		l, err := AcquireLock(filepath.Join(dir, "lock"), "run helper")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("locked", l.Path())
		time.Sleep(time.Hour)
	}
	os.Exit(3)
}

// startHelper runs the helper in mode, waits until it prints a line
// starting with ready, and returns the process and that line.
func startHelper(t *testing.T, mode, dir, ready string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v=false")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "HFLOAD_JOBS_DIR="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), ready) || strings.HasPrefix(sc.Text(), "error") {
				lines <- sc.Text()
				return
			}
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		if !ok || !strings.HasPrefix(l, ready) {
			t.Fatalf("helper %s: %q", mode, l)
		}
		return cmd, l
	case <-time.After(20 * time.Second):
		t.Fatalf("helper %s did not get ready", mode)
	}
	return nil, ""
}

func TestKilledWriterLeavesNothingVisible(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	cmd, _ := startHelper(t, "write", out, "writing")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper was not killed: %v", err)
	}
	// Partial data exists, but only in the dot-prefixed staging dir.
	fi, err := os.Stat(filepath.Join(out, StagingPrefix+"killed", "d", "hfile"))
	if err != nil || fi.Size() == 0 {
		t.Fatalf("expected a partial staged file: %v", err)
	}
	if got := visible(t, out); len(got) != 0 {
		t.Fatalf("killed run is visible: %v", got)
	}
	// The rerun takes the lock the kernel released, removes the debris and commits.
	s, err := NewStaging(out, "rerun")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	if len(s.Recovered()) != 1 {
		t.Errorf("recovered: %q", s.Recovered())
	}
	if err := s.Commit(stageFiles(t, s, map[string]string{"d/new": "complete"})); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(visible(t, out), " "); got != "_manifest.json d d/new" {
		t.Errorf("after rerun: %s", got)
	}
	if got := entries(t, out); len(got) != 2 {
		t.Errorf("leftovers: %v", got)
	}
}

func TestKilledMidCommitIsRolledForward(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	cmd, line := startHelper(t, "commit", out, "moved")
	cmd.Wait()
	if line != "moved a" {
		t.Fatalf("helper said %q", line)
	}
	// Crash window: family a is in place, the manifest is not.
	if _, err := os.Stat(filepath.Join(out, ManifestName)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("manifest visible before commit finished: %v", err)
	}
	notes, err := RecoverStaging(out, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "completed the interrupted commit of run halfway") {
		t.Errorf("notes: %q", notes)
	}
	if got := strings.Join(visible(t, out), " "); got != "_manifest.json a a/1 b b/2 c c/3" {
		t.Errorf("after recovery: %s", got)
	}
	m, err := LoadManifest(out)
	if err != nil || m.RunID != "halfway" || m.Reconcile() != nil {
		t.Errorf("manifest after recovery: %+v %v", m, err)
	}
	if got := entries(t, out); len(got) != 4 {
		t.Errorf("leftovers: %v", got)
	}
}

func TestJobStageChoosesLayout(t *testing.T) {
	root := t.TempDir()
	j := validJob()
	j.Name, j.Out = "nightly", filepath.Join(root, "out")
	started := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

	// One-off: straight into out.
	s, err := j.Stage("r1")
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewManifest(j, "v0.1", "r1", started)
	if err != nil {
		t.Fatal(err)
	}
	if m.Job != "nightly" || m.Table != "t" || m.Settings["columns"] != "HBASE_ROW_KEY,d:a" || m.Tool != "hfload" {
		t.Errorf("manifest: %+v", m)
	}
	m.Finished = started.Add(time.Second)
	if err := s.Commit(m); err != nil {
		t.Fatal(err)
	}
	if back, err := LoadManifest(j.Out); err != nil || back.RunID != "r1" || back.ToolVersion != "v0.1" {
		t.Errorf("one-off manifest: %+v %v", back, err)
	}

	// With state_dir: out/<job>/<run-id>.
	j.Out = filepath.Join(root, "out2")
	j.StateDir = filepath.Join(root, "state")
	s, err = j.Stage("r2")
	if err != nil {
		t.Fatal(err)
	}
	m, _ = NewManifest(j, "v0.1", "r2", started)
	if err := s.Commit(m); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadManifest(filepath.Join(root, "out2", "nightly", "r2")); err != nil {
		t.Error(err)
	}
	st, err := j.OpenState()
	if err != nil || st.Dir() != filepath.Join(root, "state", "nightly") {
		t.Errorf("state: %v %v", st, err)
	}
}

// TestVerifyStaged checks what the commit compares a staged tree with: every problem is named
// (unlisted, missing and resized files, a directory inside a family, a stray top-level file), side
// files (_manifest.json, _rejects.jsonl) are not HFiles, and a matching tree passes.
func TestVerifyStaged(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/f1", "abc")
	write("b/f2", "de")
	write("_rejects.jsonl", "{}")
	write(ManifestName, "{}")
	m := &Manifest{Files: []OutputFile{{Family: "a", Path: "a/f1", Bytes: 3}, {Family: "b", Path: "b/f2", Bytes: 2}}}
	if err := verifyStaged(dir, m, nil); err != nil {
		t.Fatalf("matching tree: %v", err)
	}
	write("a/extra", "x")
	write("b/sub/f3", "y")
	write("stray", "z")
	m.Files[1].Bytes = 5
	m.Files = append(m.Files, OutputFile{Family: "c", Path: "c/gone", Bytes: 1})
	err := verifyStaged(dir, m, nil)
	want := "a/extra: staged but not in the manifest; b/f2: 2 bytes, manifest says 5; b/sub: unexpected sub-directory; " +
		"stray: staged but not in the manifest; c/gone: in the manifest but not staged"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	m.Files = append(m.Files, m.Files[0])
	if err := verifyStaged(dir, m, nil); err == nil || err.Error() != "a/f1 listed twice" {
		t.Errorf("listed twice: %v", err)
	}
	// Sizes reported at close (FileWritten) stand for the files they name, a stat for the others.
	m.Files = m.Files[:2]
	m.Files[1].Bytes = 2
	for _, p := range []string{"a/extra", "b/sub", "stray"} {
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
	if err := verifyStaged(dir, m, closedSizes{{"a", "f1", 3}}); err != nil {
		t.Fatalf("matching tree with a size at close: %v", err)
	}
	err = verifyStaged(dir, m, closedSizes{{"a", "f1", 4}, {"b", "x", 1}})
	if want := "a/f1: 4 bytes, manifest says 3"; err == nil || err.Error() != want {
		t.Errorf("size at close differs: got %v, want %s", err, want)
	}
	write("b/f2", "dee") // on disk now 3 bytes; no size at close for b/f2: the stat sees it
	err = verifyStaged(dir, m, closedSizes{{"a", "f1", 3}})
	if want := "b/f2: 3 bytes, manifest says 2"; err == nil || err.Error() != want {
		t.Errorf("size by stat differs: got %v, want %s", err, want)
	}
	if err := os.Remove(filepath.Join(dir, "a", "f1")); err != nil {
		t.Fatal(err)
	}
	err = verifyStaged(dir, m, closedSizes{{"a", "f1", 3}, {"b", "f2", 2}})
	if want := "a/f1: in the manifest but not staged"; err == nil || err.Error() != want {
		t.Errorf("file gone after its close: got %v, want %s", err, want)
	}
}

// verifyStaged lists a family directory in the directory's own order but reports its problems in name
// order, as a sorted listing gave them: many problems in one directory, names that share prefixes or
// hold ": ".
func TestVerifyStagedProblemOrder(t *testing.T) {
	dir := t.TempDir()
	fam := filepath.Join(dir, "f")
	if err := os.MkdirAll(fam, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(6))
	m := &Manifest{}
	var want []string
	var names []string
	for i := 0; i < 80; i++ {
		names = append(names, fmt.Sprintf("n%02d", rng.Intn(100)), fmt.Sprintf("n%02d.x", i), fmt.Sprintf("n%02d: y", i))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, name := range names {
		p := filepath.Join(fam, name)
		rel := "f/" + name
		switch rng.Intn(4) {
		case 0: // as listed
			m.Files = append(m.Files, OutputFile{Family: "f", Path: rel, Bytes: 1})
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		case 1: // another size
			m.Files = append(m.Files, OutputFile{Family: "f", Path: rel, Bytes: 2})
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			want = append(want, rel+": 1 bytes, manifest says 2")
		case 2: // not listed
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			want = append(want, rel+": staged but not in the manifest")
		default:
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			want = append(want, rel+": unexpected sub-directory")
		}
	}
	slices.SortFunc(want, func(a, b string) int {
		name := func(s string) string {
			for _, suffix := range []string{": staged but not in the manifest", ": unexpected sub-directory", ": 1 bytes, manifest says 2"} {
				if strings.HasSuffix(s, suffix) {
					return strings.TrimSuffix(s, suffix)
				}
			}
			return s
		}
		return strings.Compare(name(a), name(b))
	})
	err := verifyStaged(dir, m, nil)
	if err == nil || err.Error() != strings.Join(want, "; ") {
		t.Fatalf("got %v\nwant %s", err, strings.Join(want, "; "))
	}
}

// expectFiles makes room for the files a load expects: the closed files' list takes them in place,
// in order, a later expectFiles keeping what it holds; more files than expected still go in.
func TestStagingExpectFiles(t *testing.T) {
	s, err := NewStaging(filepath.Join(t.TempDir(), "out"), "r")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	s.expectFiles(100)
	if cap(s.sizes) < 100 {
		t.Fatalf("room for %d files", cap(s.sizes))
	}
	s.FileWritten("d", "f0", 0)
	first := &s.sizes[0]
	for i := 1; i < 100; i++ {
		s.FileWritten("d", fmt.Sprint("f", i), int64(i))
	}
	if &s.sizes[0] != first {
		t.Fatal("the list moved before the expected files were in")
	}
	s.expectFiles(10)
	for i := 100; i < 130; i++ {
		s.FileWritten("e", fmt.Sprint("f", i), int64(i))
	}
	if len(s.sizes) != 130 {
		t.Fatalf("%d files", len(s.sizes))
	}
	for i, c := range s.sizes {
		if c.name != fmt.Sprint("f", i) || c.size != int64(i) {
			t.Fatalf("file %d: %+v", i, c)
		}
	}
}
