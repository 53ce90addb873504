package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// InstallHint says how to install the gateway.
const InstallHint = "install the Versity S3 gateway with `go install github.com/versity/versitygw/cmd/versitygw@v1.8.0` " +
	"and put $(go env GOPATH)/bin on PATH (or set HFLOAD_VERSITYGW to the binary)"

// Server is a running versitygw serving the directory Dir (each subdirectory a bucket).
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Dir       string
	bin       string
	addr      string
	logPath   string
	cmd       *exec.Cmd
}

// Binary finds versitygw: $HFLOAD_VERSITYGW, then PATH, then $GOPATH/bin and ~/go/bin.
func Binary() (string, error) {
	if p := os.Getenv("HFLOAD_VERSITYGW"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
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
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", errors.New("versitygw not found; " + InstallHint)
}

// Start starts a gateway on a free loopback port serving dir, with fresh random root credentials.
func Start(dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin, AccessKey: "hfloadtest" + randHex(4), SecretKey: randHex(20), logPath: filepath.Join(dir, ".versitygw.log")}
	var lastErr error
	for range 5 { // a free port can be taken between picking and binding it
		addr, err := freePort()
		if err != nil {
			return nil, err
		}
		s.addr = addr
		s.Endpoint = "http://" + addr
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// Restart starts a stopped server again on the same port and directory.
func (s *Server) Restart() error { return s.start() }

func (s *Server) start() error {
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "--port", s.addr, "posix", s.Dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start versitygw: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(s.logPath)
			return fmt.Errorf("versitygw exited at start (%v): %s", err, tail(string(log), 600))
		default:
		}
		resp, err := http.Get(s.Endpoint + "/")
		if err == nil {
			resp.Body.Close()
			s.cmd = cmd
			go func() { <-exited }() // reap
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	return errors.New("versitygw did not answer within 30 s")
}

// Stop stops the server (SIGTERM, then SIGKILL after 5 s).
func (s *Server) Stop() error {
	if s.cmd == nil {
		return nil
	}
	p := s.cmd.Process
	s.cmd = nil
	_ = p.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if p.Signal(syscall.Signal(0)) != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = p.Kill()
	// Wait until the port is closed, so a test that stops the server sees it down.
	for time.Now().Before(deadline.Add(5 * time.Second)) {
		c, err := net.DialTimeout("tcp", s.addr, 200*time.Millisecond)
		if err != nil {
			return nil
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Env is the environment a client (in a child process, or set with os.Setenv) needs to reach the
// server with the standard AWS variables, isolated from the user's own AWS config.
func (s *Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// Setenv sets Env in this process for the rest of the test.
func (s *Server) Setenv(t interface{ Setenv(k, v string) }) {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// CreateBucket makes a new empty bucket (a directory of Dir, which is what a posix-backed bucket is).
func (s *Server) CreateBucket(name string) error {
	return os.Mkdir(filepath.Join(s.Dir, name), 0o755)
}

// NewBucket creates a bucket with a fresh random name and returns it.
func (s *Server) NewBucket() (string, error) {
	name := "b" + randHex(6)
	return name, s.CreateBucket(name)
}

// Ping checks the server answers.
func (s *Server) Ping(ctx context.Context) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
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
		return s[len(s)-n:]
	}
	return s
}
