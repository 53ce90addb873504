package testdb

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The servers themselves are exercised by the packages that use them (jobs: dialects_db_test.go);
// here only what needs no server.
func TestNotInstalledSaysHowToInstall(t *testing.T) {
	err := &ErrNotInstalled{What: "PostgreSQL", Hint: PostgresHint}
	if !strings.Contains(err.Error(), "apt-get install -y postgresql") {
		t.Errorf("message %q has no install hint", err)
	}
	for _, c := range []struct {
		ci, hfloadCI string
		want         bool
	}{{"", "", false}, {"true", "", true}, {"", "1", true}, {"false", "0", false}} {
		t.Setenv("CI", c.ci)
		t.Setenv("HFLOAD_CI", c.hfloadCI)
		if InCI() != c.want {
			t.Errorf("CI=%q HFLOAD_CI=%q: InCI %v", c.ci, c.hfloadCI, !c.want)
		}
	}
	var s Servers
	s.Close() // nothing started: nothing to stop
}

// TestProcessStartFailures: a server that exits at start is reported with its output (and the extra
// log), one that never gets ready is killed when ctx ends; stop removes the directory either way.
func TestProcessStartFailures(t *testing.T) {
	notReady := func(context.Context) error { return errors.New("not ready") }
	p := &process{name: "sh", root: t.TempDir()}
	err := p.start(t.Context(), exec.Command("sh", "-c", "echo boom; exit 3"), notReady, func() string { return "from the log" })
	if err == nil || !strings.Contains(err.Error(), "sh exited at start") || !strings.Contains(err.Error(), "boom") ||
		!strings.Contains(err.Error(), "from the log") {
		t.Fatalf("exit at start: %v", err)
	}
	p.stop(syscall.SIGTERM)
	if _, err := os.Stat(p.root); !os.IsNotExist(err) {
		t.Fatalf("stop left %s: %v", p.root, err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	p = &process{name: "sleep", root: t.TempDir()}
	start := time.Now()
	err = p.start(ctx, exec.Command("sleep", "60"), notReady, nil)
	if err == nil || !strings.Contains(err.Error(), "sleep did not start") || time.Since(start) > 20*time.Second {
		t.Fatalf("never ready: %v after %v", err, time.Since(start))
	}
	select {
	case <-p.done:
	default:
		t.Fatal("the process that never got ready still runs")
	}
	p.stop(syscall.SIGTERM)

	ready := 0
	p = &process{name: "sleep", root: t.TempDir()}
	if err := p.start(t.Context(), exec.Command("sleep", "60"), func(context.Context) error {
		if ready++; ready < 2 {
			return errors.New("not yet")
		}
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	p.stop(syscall.SIGTERM)
	select {
	case <-p.done:
	default:
		t.Fatal("stop left the process running")
	}
}
