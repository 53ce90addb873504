package version

import (
	"runtime/debug"
	"strings"
)

// stamped is set at link time by the Makefile:
//
//	go build -ldflags "-X github.com/hfload/hfload/internal/version.stamped=$(git describe --tags --always --dirty)"
//
// It is never assigned at run time.
var stamped string

// String returns the build's version: the stamped one; else the main module's version from the build
// information (`go install …@v1.2.3`, or the pseudo-version the go command derives from the commit
// it builds); else the commit (with "+dirty" for uncommitted changes); else "dev".
func String() string {
	info, _ := debug.ReadBuildInfo()
	return resolve(stamped, info)
}

func resolve(stamped string, info *debug.BuildInfo) string {
	if s := strings.TrimSpace(stamped); s != "" {
		return s
	}
	if info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
