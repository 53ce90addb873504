package beamrun

import (
	"fmt"
	"os"
)

// PrivateTempDir points TMPDIR at a new directory inside the current temporary directory and returns
// the function that removes it and restores TMPDIR. A program that runs pipelines calls it once, at
// its start, before any goroutine reads TMPDIR; the returned function goes before it exits.
//
// Why: in loopback mode (Prism in this process, the default of hfload-beam) the Go SDK creates an
// empty placeholder file "beamloopbackworker-*" in os.TempDir() for every pipeline and never removes
// it (sdks/go/pkg/beam/runners/universal/runnerlib/execute.go, apache/beam#27569), so a cron-driven
// load would leave one file in /tmp per run. Everything else the SDK or a worker started by the
// runner puts in the temporary directory during the run goes with it too.
//
// TMPDIR is process-wide: this belongs in a main function or a TestMain, never in a library call.
func PrivateTempDir() (cleanup func(), err error) {
	old, had := os.LookupEnv("TMPDIR")
	dir, err := os.MkdirTemp("", "hfload-beam-")
	if err != nil {
		return nil, fmt.Errorf("private temporary directory: %w", err)
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("private temporary directory: %w", err)
	}
	return func() {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
		os.RemoveAll(dir)
	}, nil
}
