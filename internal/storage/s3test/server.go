package s3test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/hfload/hfload/internal/storage/servertest"
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
	proc      servertest.Process
}

// Binary finds versitygw: $HFLOAD_VERSITYGW, then PATH, then $GOPATH/bin and ~/go/bin.
func Binary() (string, error) {
	p, err := servertest.Find("versitygw", "HFLOAD_VERSITYGW", servertest.GoBinDirs()...)
	if err != nil {
		return "", errors.New(err.Error() + "; " + InstallHint)
	}
	return p, nil
}

// Start starts a gateway on a free loopback port serving dir, with fresh random root credentials.
func Start(dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, AccessKey: "hfloadtest" + servertest.RandHex(4), SecretKey: servertest.RandHex(20)}
	s.proc = servertest.Process{Name: "versitygw", Bin: bin, LogPath: filepath.Join(dir, ".versitygw.log"),
		Env:  []string{"ROOT_ACCESS_KEY=" + s.AccessKey, "ROOT_SECRET_KEY=" + s.SecretKey},
		Args: func(addr string) []string { return []string{"--port", addr, "posix", dir} }}
	if err := s.proc.Start(); err != nil {
		return nil, err
	}
	s.Endpoint = "http://" + s.proc.Addr()
	return s, nil
}

// Restart starts a stopped server again on the same port and directory.
func (s *Server) Restart() error { return s.proc.Restart() }

// Stop stops the server (SIGTERM, then SIGKILL after 5 s) and waits until its port is closed.
func (s *Server) Stop() error { return s.proc.Stop() }

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
	name := "b" + servertest.RandHex(6)
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
