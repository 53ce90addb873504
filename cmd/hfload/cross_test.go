package main

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// crossTargets are the release targets built by this test: windows/amd64, the one whose build broke
// (jobs/lock.go used flock and kill(2)). `make cross`, which .ci/run calls, builds every release target
// (linux/amd64, linux/arm64, darwin/arm64, windows/amd64); building them all here would make every
// make test compile the module three more times on a cold cache.
var crossTargets = []string{"windows/amd64"}

// Issue 23 item 15: the release targets build. The compiler's cache makes this cheap after the first run.
func TestReleaseTargetsBuild(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	for _, target := range crossTargets {
		goos, goarch, _ := strings.Cut(target, "/")
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			continue // every other test builds this one
		}
		cmd := exec.Command(goBin, "build", "-o", os.DevNull, ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=%s GOARCH=%s go build ./cmd/hfload: %v\n%s", goos, goarch, err, out)
		}
	}
}
