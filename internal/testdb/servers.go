package testdb

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Servers starts each kind of server once, on first use, and stops them all at Close. The zero value
// is ready to use; it is safe for concurrent use.
type Servers struct {
	mu     sync.Mutex
	pg     *Postgres
	pgErr  error
	my     *MariaDB
	myErr  error
	closed bool
}

// startTimeout bounds the start of one server (initialization included) on a loaded machine.
const startTimeout = 3 * time.Minute

// Postgres returns the package's PostgreSQL server, starting it on first use. When it cannot run, the
// test is skipped (failed under CI) with the reason.
func (s *Servers) Postgres(t testing.TB) *Postgres {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pg == nil && s.pgErr == nil {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		s.pg, s.pgErr = StartPostgres(ctx)
		cancel()
	}
	if s.pgErr != nil {
		unavailable(t, s.pgErr)
	}
	return s.pg
}

// MariaDB returns the package's MariaDB server, starting it on first use (see Postgres).
func (s *Servers) MariaDB(t testing.TB) *MariaDB {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.my == nil && s.myErr == nil {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		s.my, s.myErr = StartMariaDB(ctx)
		cancel()
	}
	if s.myErr != nil {
		unavailable(t, s.myErr)
	}
	return s.my
}

// Close stops the servers that were started and removes their directories.
func (s *Servers) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pg != nil {
		s.pg.Stop()
	}
	if s.my != nil {
		s.my.Stop()
	}
	s.pg, s.my = nil, nil
	s.pgErr = fmt.Errorf("testdb: servers closed")
	s.myErr = s.pgErr
}

// ErrNotInstalled marks a server whose binaries are missing.
type ErrNotInstalled struct{ What, Hint string }

func (e *ErrNotInstalled) Error() string { return e.What + " not found; install with: " + e.Hint }

// InCI reports whether the tests run under CI, where a missing server is a failure, not a skip.
func InCI() bool {
	return os.Getenv("CI") == "true" || os.Getenv("HFLOAD_CI") == "1"
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if InCI() {
		t.Fatalf("testdb: %v (CI=true/HFLOAD_CI=1: real servers are required)", err)
	}
	t.Skipf("testdb: %v", err)
}

// runAs is the user a server process runs as: the current one, or, for root, a system user.
type runAs struct {
	cred     *syscall.Credential // nil = the current user
	uid, gid int
}

// serverUser picks who runs a server that refuses root: name's uid/gid when the process is root.
func serverUser(name string) (runAs, error) {
	if os.Geteuid() != 0 {
		return runAs{uid: os.Getuid(), gid: os.Getgid()}, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return runAs{}, fmt.Errorf("running as root needs the %q user to run the server: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return runAs{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid: uid, gid: gid}, nil
}

// mkdir makes a directory the server user owns.
func (r runAs) mkdir(path string) error {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	return os.Chown(path, r.uid, r.gid)
}

// command builds a command that runs as r, in dir, and is killed if the test process dies.
func (r runAs) command(ctx context.Context, dir, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

// tempRoot makes the server's private directory: world-readable (so a server user may enter it), its
// subdirectories owned by the server user.
func tempRoot(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// findBin returns the first existing path among candidates (absolute paths or names on PATH).
func findBin(candidates ...string) string {
	for _, c := range candidates {
		if filepath.IsAbs(c) {
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				return c
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}
