package testdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is what a private server is to the tests, whichever the server: its directory and its
// running process, started and waited for, stopped and cleaned up the same way.
type process struct {
	name string // the server program, for messages
	root string // the server's private directory, removed by stop
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  bytes.Buffer  // the server's stdout and stderr
}

// start starts cmd and polls ready (every 200 ms) until it succeeds, the process exits (its output,
// and exitLog's text when given, in the error) or ctx ends (the process is killed).
func (p *process) start(ctx context.Context, cmd *exec.Cmd, ready func(context.Context) error, exitLog func() string) error {
	p.log.Reset()
	cmd.Stdout, cmd.Stderr = &p.log, &p.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	done := p.done
	go func() { cmd.Wait(); close(done) }()
	for {
		if ready(ctx) == nil {
			return nil
		}
		select {
		case <-done:
			more := ""
			if exitLog != nil {
				more = exitLog()
			}
			return fmt.Errorf("%s exited at start:\n%s%s", p.name, &p.log, more)
		case <-ctx.Done():
			stopProcess(cmd, done, syscall.SIGKILL, time.Second)
			return fmt.Errorf("%s did not start: %w\n%s", p.name, ctx.Err(), &p.log)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// onFreePort calls start with a free loopback port, up to three times: another process may take the
// port between freePort and the server's bind. It returns the port start succeeded on.
func onFreePort(ctx context.Context, start func(port int) error) (int, error) {
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		if err = start(port); err == nil {
			return port, nil
		}
		if attempt == 2 || ctx.Err() != nil {
			return 0, err
		}
	}
}

// stop asks the server to stop with sig (killing it after 30 s) and removes its directory.
func (p *process) stop(sig syscall.Signal) {
	if p.cmd != nil {
		stopProcess(p.cmd, p.done, sig, 30*time.Second)
		p.cmd = nil
	}
	if p.root != "" {
		os.RemoveAll(p.root)
	}
}

// stopProcess asks a server to stop with sig, then kills its process group after grace.
func stopProcess(cmd *exec.Cmd, done <-chan struct{}, sig syscall.Signal, grace time.Duration) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(grace):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// run runs a client program and returns its stdout, with stderr in the error.
func run(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || stderr.Len() > 0 {
			return stdout.Bytes(), fmt.Errorf("%s: %w: %s", name, err, bytes.TrimSpace(stderr.Bytes()))
		}
		return stdout.Bytes(), fmt.Errorf("%s: %w", name, err)
	}
	return stdout.Bytes(), nil
}
