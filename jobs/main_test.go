package jobs

import (
	"os"
	"testing"

	"github.com/hfload/hfload/internal/testdb"
)

// servers are the private database servers of this package's tests (dialects_db_test.go), each
// started at most once, on first use, and stopped when the tests end.
var servers testdb.Servers

func TestMain(m *testing.M) {
	code := m.Run()
	servers.Close()
	os.Exit(code)
}
