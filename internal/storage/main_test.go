package storage_test

import (
	"os"
	"testing"

	"github.com/hfload/hfload/internal/storage/cloudtest"
	"github.com/hfload/hfload/internal/storage/s3test"
)

var (
	gw  s3test.Gateway
	emu cloudtest.Emulators
)

func TestMain(m *testing.M) {
	os.Exit(cloudtest.Main(func() int { return s3test.Main(m, &gw) }, &emu))
}
