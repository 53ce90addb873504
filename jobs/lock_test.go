package jobs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestLockExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state", "job", "lock")
	l, err := AcquireLock(p, "run job")
	if err != nil {
		t.Fatal(err)
	}
	if l.Previous() != nil {
		t.Errorf("fresh lock has a previous holder: %v", l.Previous())
	}
	_, err = AcquireLock(p, "run job")
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || ExitCode(err) != ExitLocked {
		t.Fatalf("second acquire: %v", err)
	}
	host, _ := os.Hostname()
	if le.Holder.PID != os.Getpid() || le.Holder.Host != host || le.Holder.Purpose != "run job" || le.Holder.Started.IsZero() {
		t.Errorf("holder = %+v", le.Holder)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("held by pid %d on %s since ", os.Getpid(), host)) {
		t.Errorf("message: %v", err)
	}
	info, held, err := ReadLock(p)
	if err != nil || !held || info.PID != os.Getpid() {
		t.Errorf("ReadLock while held: %+v %v %v", info, held, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock file not removed: %v", err)
	}
	if _, held, _ := ReadLock(p); held {
		t.Error("ReadLock: held after release")
	}
	l2, err := AcquireLock(p, "again")
	if err != nil {
		t.Fatal(err)
	}
	l2.Release()
}

// Many goroutines race for the lock, releasing and retaking it: at no time
// do two hold it. flock is per open file, so goroutines behave like
// processes here.
func TestLockRaceHasOneWinner(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	var mu sync.Mutex
	holders, maxHolders, wins := 0, 0, 0
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				l, err := AcquireLock(p, "race")
				if err != nil {
					if !errors.Is(err, ErrLocked) {
						t.Error(err)
						return
					}
					continue
				}
				mu.Lock()
				holders++
				wins++
				maxHolders = max(maxHolders, holders)
				mu.Unlock()
				time.Sleep(20 * time.Microsecond) // give other takers a chance to (wrongly) get in
				mu.Lock()
				holders--
				mu.Unlock()
				if err := l.Release(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if maxHolders != 1 || wins == 0 {
		t.Errorf("max simultaneous holders %d, wins %d", maxHolders, wins)
	}
}

func TestStaleLockOfKilledHolderIsTakenOver(t *testing.T) {
	dir := t.TempDir()
	cmd, line := startHelper(t, "lock", dir, "locked")
	p := filepath.Join(dir, "lock")
	if line != "locked "+p {
		t.Fatalf("helper: %q", line)
	}
	// While the holder lives, we are refused, with its pid in the message.
	_, err := AcquireLock(p, "run")
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("while held: %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// The lock file is still there (SIGKILL ran no cleanup) but the kernel
	// released the flock: we take over and learn who held it.
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("lock file vanished: %v", err)
	}
	if _, held, _ := ReadLock(p); held {
		t.Error("ReadLock says held after holder died")
	}
	l, err := AcquireLock(p, "run")
	if err != nil {
		t.Fatalf("takeover: %v", err)
	}
	defer l.Release()
	if l.Previous() == nil || l.Previous().PID != cmd.Process.Pid {
		t.Errorf("previous holder = %v, want pid %d", l.Previous(), cmd.Process.Pid)
	}
	// And the taker now holds it exclusively.
	if _, err := AcquireLock(p, "third"); !errors.Is(err, ErrLocked) {
		t.Errorf("third: %v", err)
	}
}

func TestExitCodes(t *testing.T) {
	_, pathErr := os.Open("/nonexistent/x")
	cases := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{fmt.Errorf("load: %w", ErrConfig), 1},
		{fmt.Errorf("pipeline: %w", ErrTooManyRejects), 2},
		{fmt.Errorf("write: %w", ErrIO), 3},
		{fmt.Errorf("read input: %w", pathErr), 3},
		{&LockedError{Path: "x"}, 4},
		{fmt.Errorf("plan: %w", ErrInputChanged), 5},
		{fmt.Errorf("out: %w", ErrOutputExists), 1},
		{fmt.Errorf("run: %w", errors.Join(errors.New("x"), ErrLocked)), 4},
		{errors.New("something else"), 1},
	}
	for _, c := range cases {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
