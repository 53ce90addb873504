package storage_test

import (
	"os"
	"testing"

	"github.com/hfload/hfload/internal/storage/s3test"
)

var gw s3test.Gateway

func TestMain(m *testing.M) { os.Exit(s3test.Main(m, &gw)) }
