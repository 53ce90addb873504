//go:build linux

package jobs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestKernelAtLeast(t *testing.T) {
	for _, c := range []struct {
		release string
		want    bool
	}{
		{"5.8.0", true}, {"5.7.19", false}, {"6.1.0-13-amd64", true}, {"5.10.0-rc1", true},
		{"4.19.0", false}, {"5.8-rc3", true}, {"10.0", true}, {"x.y", false}, {"5", false}, {"", false},
	} {
		if got := kernelAtLeast(c.release, 5, 8); got != c.want {
			t.Errorf("kernelAtLeast(%q, 5, 8) = %v, want %v", c.release, got, c.want)
		}
	}
}

// A staging dir's syncer holds it open from its creation when syncfs reports errors, syncs what was
// written under it (one syncfs, or an fsync of every file in the fallback), and fails once the dir is gone.
func TestStagingSyncer(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "stg")
		if err := os.MkdirAll(filepath.Join(dir, "f"), 0o755); err != nil {
			t.Fatal(err)
		}
		s := openStagingSyncer(dir)
		if want := syncfsReportsErrors(); (s.dir != nil) != want {
			t.Fatalf("fallback %v: syncer holds the dir open: %v, want %v", fallback, s.dir != nil, want)
		}
		if fallback {
			s.close()
		}
		if err := os.WriteFile(filepath.Join(dir, "f", "a"), []byte("cells"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.sync(dir); err != nil {
			t.Fatalf("fallback %v: sync: %v", fallback, err)
		}
		if fallback {
			os.RemoveAll(dir)
			if err := s.sync(dir); err == nil {
				t.Fatal("fsync of every file of a removed dir succeeded")
			}
		}
		s.close()
		s.close() // idempotent
	}
}

// start runs the sync in the background and wait returns its result: a second start runs nothing, and
// close waits for a started sync. A sync of a removed dir fails (the fallback's fsync of every file).
func TestStagingSyncerStart(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "stg")
		if err := os.MkdirAll(filepath.Join(dir, "f"), 0o755); err != nil {
			t.Fatal(err)
		}
		s := openStagingSyncer(dir)
		if fallback {
			s.close()
		}
		if err := os.WriteFile(filepath.Join(dir, "f", "a"), []byte("cells"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.start(dir)
		done := s.done
		s.start(dir)
		if s.done != done {
			t.Fatalf("fallback %v: a second start started another sync", fallback)
		}
		if err := s.wait(); err != nil {
			t.Fatalf("fallback %v: sync: %v", fallback, err)
		}
		s.close()
		if fallback {
			s = openStagingSyncer(dir)
			s.close()
			os.RemoveAll(dir)
			s.start(dir)
			s.close()
			if err := s.wait(); err == nil {
				t.Fatal("fsync of every file of a removed dir succeeded")
			}
		}
	}
}

// Every earlyWritebackFiles completed files start a background syncfs on a descriptor other than the
// commit's (so an error it meets is still reported to the commit); the commit's sync stops it, and
// files reported after that change nothing.
func TestStagingSyncerEarlyWriteback(t *testing.T) {
	if !syncfsReportsErrors() {
		t.Skip("this kernel's syncfs reports no errors (before Linux 5.8): the commit fsyncs every file, no early writeback")
	}
	dir := filepath.Join(t.TempDir(), "stg")
	if err := os.MkdirAll(filepath.Join(dir, "f"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := openStagingSyncer(dir)
	defer s.close()
	if s.early == nil {
		t.Fatal("no early writeback with syncfs")
	}
	if s.early.f.Fd() == s.dir.Fd() {
		t.Fatal("the background syncs share the commit's descriptor")
	}
	for i := 0; i < earlyWritebackFiles-1; i++ {
		s.fileWritten()
	}
	if len(s.early.nudge) != 0 || s.early.syncs.Load() != 0 {
		t.Fatalf("a sync was started before %d files", earlyWritebackFiles)
	}
	if err := os.WriteFile(filepath.Join(dir, "f", "a"), []byte("cells"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.fileWritten()
	deadline := time.Now().Add(30 * time.Second)
	for s.early.syncs.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no background sync %v after the %d-th file", 30*time.Second, earlyWritebackFiles)
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.sync(dir); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if !s.early.stopped {
		t.Fatal("the commit's sync left the background syncs running")
	}
	syncs := s.early.syncs.Load()
	for i := 0; i < 2*earlyWritebackFiles; i++ {
		s.fileWritten()
	}
	if got := s.early.syncs.Load(); got != syncs {
		t.Fatalf("background syncs after the commit's: %d, want %d", got, syncs)
	}
}
