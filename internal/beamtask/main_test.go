package beamtask_test

import (
	"os"
	"testing"

	"github.com/hfload/hfload/internal/storage/s3test"
)

// gw is the package's S3 server (s3test), started once for the tests that need it.
var gw s3test.Gateway

func TestMain(m *testing.M) { os.Exit(s3test.Main(m, &gw)) }
