package servertest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is a server started on a loopback port, which can be stopped and started again on the
// same port and data (to test a server that goes away mid-run). Set the exported fields, then Start.
type Process struct {
	Name    string                     // for messages
	Bin     string                     // the program
	Args    func(addr string) []string // its arguments to listen on addr (127.0.0.1:PORT)
	Env     []string                   // added to this process's environment
	LogPath string                     // its stdout and stderr, appended

	addr   string
	cmd    *exec.Cmd
	exited chan error
}

// Start picks a free port (retrying when it is taken meanwhile) and starts the server on it.
func (p *Process) Start() error {
	var last error
	for range 5 {
		addr, err := FreePort()
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

// Addr is the server's 127.0.0.1:PORT.
func (p *Process) Addr() string { return p.addr }

// run starts the server and waits until its port accepts connections.
func (p *Process) run() error {
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(p.Bin, p.Args(p.addr)...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(p.LogPath)
			return fmt.Errorf("%s exited at start (%v): %s", p.Name, err, Tail(string(log), 600))
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
	<-exited
	return fmt.Errorf("%s did not listen within 60 s", p.Name)
}

// Stop stops the server (SIGTERM, SIGKILL after 5 s) and waits until its port is closed.
func (p *Process) Stop() error {
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
	return errors.New(p.Name + " still listens after it stopped")
}

// Restart starts a stopped server again on the same port and data; a running one is left as it is.
func (p *Process) Restart() error {
	if p.cmd != nil {
		return nil
	}
	return p.run()
}

// Running reports whether the server runs.
func (p *Process) Running() bool { return p.cmd != nil }
