package cloudtest

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/hfload/hfload/internal/storage/servertest"
)

// GCSInstallHint says how to install the Cloud Storage emulator.
const GCSInstallHint = "install fake-gcs-server with `go install github.com/fsouza/fake-gcs-server@v1.56.1` and put $(go env GOPATH)/bin " +
	"on PATH (or set HFLOAD_FAKE_GCS to the binary)"

// GCS is a running fake-gcs-server (filesystem backend), reached by the standard STORAGE_EMULATOR_HOST.
type GCS struct {
	servertest.Process
	Dir string
}

// StartGCS starts fake-gcs-server on a free loopback port, its buckets under dir.
func StartGCS(dir string) (*GCS, error) {
	bin, err := servertest.Find("fake-gcs-server", "HFLOAD_FAKE_GCS", servertest.GoBinDirs()...)
	if err != nil {
		return nil, fmt.Errorf("%w; %s", err, GCSInstallHint)
	}
	g := &GCS{Dir: dir}
	g.Process = servertest.Process{Name: "fake-gcs-server", Bin: bin, LogPath: filepath.Join(dir, ".fake-gcs.log"), Args: func(addr string) []string {
		host, port, _ := strings.Cut(addr, ":")
		return []string{"-scheme", "http", "-host", host, "-port", port, "-backend", "filesystem",
			"-filesystem-root", filepath.Join(dir, "data"), "-log-level", "warn", "-public-host", addr, "-external-url", "http://" + addr}
	}}
	return g, g.Start()
}

// Endpoint is the emulator's base URL.
func (g *GCS) Endpoint() string { return "http://" + g.Addr() }

// Env is the environment a client (this process or a child) needs to reach the emulator, isolated
// from the user's own Google credentials.
func (g *GCS) Env() []string {
	return []string{
		"STORAGE_EMULATOR_HOST=" + g.Addr(),
		"GOOGLE_APPLICATION_CREDENTIALS=",
		"GOOGLE_CLOUD_PROJECT=hfload-test",
		"CLOUDSDK_CONFIG=" + filepath.Join(g.Dir, "no-gcloud"),
	}
}

// Setenv sets Env for the rest of the test.
func (g *GCS) Setenv(t interface{ Setenv(k, v string) }) { setenv(t, g.Env()) }

// NewBucket creates a bucket with a fresh name.
func (g *GCS) NewBucket() (string, error) {
	name := "b" + servertest.RandHex(6)
	resp, err := http.Post(g.Endpoint()+"/storage/v1/b?project=hfload-test", "application/json",
		bytes.NewReader([]byte(`{"name":"`+name+`"}`)))
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("create bucket %s: HTTP %d", name, resp.StatusCode)
	}
	return name, nil
}

func setenv(t interface{ Setenv(k, v string) }, env []string) {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}
