package testdb

import (
	"strings"
	"testing"
)

// The servers themselves are exercised by the packages that use them (jobs: dialects_db_test.go);
// here only what needs no server.
func TestNotInstalledSaysHowToInstall(t *testing.T) {
	err := &ErrNotInstalled{What: "PostgreSQL", Hint: PostgresHint}
	if !strings.Contains(err.Error(), "apt-get install -y postgresql") {
		t.Errorf("message %q has no install hint", err)
	}
	for _, c := range []struct {
		ci, hfloadCI string
		want         bool
	}{{"", "", false}, {"true", "", true}, {"", "1", true}, {"false", "0", false}} {
		t.Setenv("CI", c.ci)
		t.Setenv("HFLOAD_CI", c.hfloadCI)
		if InCI() != c.want {
			t.Errorf("CI=%q HFLOAD_CI=%q: InCI %v", c.ci, c.hfloadCI, !c.want)
		}
	}
	var s Servers
	s.Close() // nothing started: nothing to stop
}
