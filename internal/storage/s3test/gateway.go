package s3test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/storage/servertest"
)

// Gateway is the shared server of one test package, started by Main.
type Gateway struct {
	srv *Server
	err error
}

// CI reports whether tests run under CI (CI=true or HFLOAD_CI=1), where a missing server fails tests
// instead of skipping them.
func CI() bool { return servertest.CI() }

// Main starts a gateway in a temporary directory, runs the tests and stops it. Use it from TestMain:
//
//	var gw s3test.Gateway
//	func TestMain(m *testing.M) { os.Exit(s3test.Main(m, &gw)) }
//
// A gateway that cannot start is not an error here: each test that needs it says why (Need).
func Main(m *testing.M, g *Gateway) int {
	dir, err := os.MkdirTemp("", "hfload-s3test-")
	if err != nil {
		g.err = err
		return m.Run()
	}
	defer os.RemoveAll(dir)
	g.srv, g.err = Start(dir)
	code := m.Run()
	if g.srv != nil {
		g.srv.Stop()
	}
	return code
}

// Need returns the running server, or skips the test (fails it under CI) saying why it is missing.
func (g *Gateway) Need(t testing.TB) *Server {
	t.Helper()
	if g.srv == nil {
		msg := fmt.Sprintf("no S3 gateway: %v", g.err)
		if !strings.Contains(msg, InstallHint) {
			msg += "; " + InstallHint
		}
		if CI() {
			t.Fatal(msg + " (CI: the gateway must run; .ci/run installs it)")
		}
		t.Skip(msg)
	}
	if !g.srv.proc.Running() {
		if err := g.srv.Restart(); err != nil {
			t.Fatalf("restart the S3 gateway: %v", err)
		}
	}
	return g.srv
}
