package cloudtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/hfload/hfload/internal/storage/servertest"
)

// Emulators are the emulators of one test package, started by Main.
type Emulators struct {
	gcs    *GCS
	gcsErr error
	az     *Azurite
	azErr  error
}

// CI reports whether tests run under CI (CI=true or HFLOAD_CI=1), where a missing emulator fails
// tests instead of skipping them.
func CI() bool { return servertest.CI() }

// Main starts both emulators in a temporary directory, runs the tests (run, usually m.Run or another
// harness's Main around it) and stops them. Use it from TestMain:
//
//	var emu cloudtest.Emulators
//	func TestMain(m *testing.M) { os.Exit(cloudtest.Main(m.Run, &emu)) }
//
// An emulator that cannot start is reported by the tests that need it.
func Main(run func() int, e *Emulators) int {
	dir, err := os.MkdirTemp("", "hfload-cloudtest-")
	if err != nil {
		e.gcsErr, e.azErr = err, err
		return run()
	}
	defer os.RemoveAll(dir)
	for _, sub := range []string{"gcs", "azure"} {
		if err := os.Mkdir(dir+"/"+sub, 0o755); err != nil {
			e.gcsErr, e.azErr = err, err
			return run()
		}
	}
	e.gcs, e.gcsErr = StartGCS(dir + "/gcs")
	e.az, e.azErr = StartAzurite(dir + "/azure")
	code := run()
	if e.gcs != nil {
		e.gcs.Stop()
	}
	if e.az != nil {
		e.az.Stop()
	}
	return code
}

// NeedGCS returns the running Cloud Storage emulator, or skips the test (fails it under CI).
func (e *Emulators) NeedGCS(t testing.TB) *GCS {
	t.Helper()
	need(t, e.gcs != nil, "Cloud Storage emulator", e.gcsErr)
	if err := e.gcs.Restart(); err != nil {
		t.Fatalf("restart fake-gcs-server: %v", err)
	}
	return e.gcs
}

// NeedAzure returns the running Azurite, or skips the test (fails it under CI).
func (e *Emulators) NeedAzure(t testing.TB) *Azurite {
	t.Helper()
	need(t, e.az != nil, "Azure Storage emulator", e.azErr)
	if err := e.az.Restart(); err != nil {
		t.Fatalf("restart Azurite: %v", err)
	}
	return e.az
}

func need(t testing.TB, ok bool, what string, err error) {
	t.Helper()
	if ok {
		return
	}
	msg := fmt.Sprintf("no %s: %v", what, err)
	if CI() {
		t.Fatal(msg + " (CI: it must run; .ci/run installs it)")
	}
	t.Skip(msg)
}
