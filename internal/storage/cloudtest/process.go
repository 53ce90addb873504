package cloudtest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is an emulator started on a loopback port, which can be stopped and started again on the
// same port and data directory (to test a server that goes away mid-run).
type process struct {
	name    string
	bin     string
	args    func(addr string) []string
	env     []string
	addr    string // 127.0.0.1:PORT
	logPath string
	cmd     *exec.Cmd
	exited  chan error
}

// start picks a free port (retrying when it is taken meanwhile) and starts the emulator on it.
func (p *process) start() error {
	var last error
	for range 5 {
		addr, err := freePort()
		if err != nil {
			return err
		}
		p.addr = addr
		if last = p.run(); last == nil {
			return nil
		}
	}
	return last
}

func (p *process) run() error {
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(p.bin, p.args(p.addr)...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(p.logPath)
			return fmt.Errorf("%s exited at start (%v): %s", p.name, err, tail(string(log), 600))
		default:
		}
		if c, err := net.DialTimeout("tcp", p.addr, 200*time.Millisecond); err == nil {
			c.Close()
			p.cmd, p.exited = cmd, exited
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	return fmt.Errorf("%s did not listen within 60 s", p.name)
}

// Stop stops the emulator (SIGTERM, SIGKILL after 5 s) and waits until its port is closed.
func (p *process) Stop() error {
	if p.cmd == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.cmd = nil
	for range 100 {
		c, err := net.DialTimeout("tcp", p.addr, 100*time.Millisecond)
		if err != nil {
			return nil
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New(p.name + " still listens after it stopped")
}

// Restart starts a stopped emulator again on the same port and data.
func (p *process) Restart() error {
	if p.cmd != nil {
		return nil
	}
	return p.run()
}

// Running reports whether the emulator runs.
func (p *process) Running() bool { return p.cmd != nil }

// find looks for a program: the environment variable env, then PATH, then extra directories.
func find(name, env string, extra ...string) (string, error) {
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range extra {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

func goBinDirs() []string {
	var dirs []string
	if gp := os.Getenv("GOPATH"); gp != "" {
		for _, d := range filepath.SplitList(gp) {
			dirs = append(dirs, filepath.Join(d, "bin"))
		}
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		dirs = append(dirs, filepath.Join(strings.TrimSpace(string(out)), "bin"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	return dirs
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
