package main

import (
	"os"
	"testing"

	"github.com/hfload/hfload/internal/storage/cloudtest"
	"github.com/hfload/hfload/internal/storage/s3test"
)

// cliEnv makes the test binary act as the hfload command: subprocess tests
// (e.g. the SIGKILL test) re-execute os.Args[0] with it set and the command's
// arguments.
const cliEnv = "HFLOAD_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(cloudtest.Main(func() int { return s3test.Main(m, &gw) }, &emu))
}

var (
	// gw is the package's private S3 gateway (issue 20 tests); tests that need it call gw.Need.
	gw s3test.Gateway
	// emu are its Cloud Storage and Azure emulators (run_clouds_test.go).
	emu cloudtest.Emulators
)
