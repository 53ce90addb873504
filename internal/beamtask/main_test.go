package beamtask_test

import (
	"os"
	"testing"

	"github.com/hfload/hfload/internal/storage/cloudtest"
	"github.com/hfload/hfload/internal/storage/s3test"
)

var (
	// gw is the package's S3 server (s3test), started once for the tests that need it.
	gw s3test.Gateway
	// emu are its Cloud Storage and Azure emulators (clouds_test.go).
	emu cloudtest.Emulators
)

func TestMain(m *testing.M) {
	os.Exit(cloudtest.Main(func() int { return s3test.Main(m, &gw) }, &emu))
}
