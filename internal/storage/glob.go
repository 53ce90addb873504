package storage

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// HasMeta reports whether key holds glob metacharacters (* ? [).
func HasMeta(key string) bool { return strings.ContainsAny(key, "*?[") }

// Glob returns the objects whose keys match pattern (path.Match syntax: "*" and "?" do not cross "/"),
// sorted by key. It lists only the prefix before the first metacharacter.
func Glob(ctx context.Context, st Store, pattern string) ([]Info, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("glob %s: %w", st.URL(pattern), err)
	}
	prefix := pattern
	if i := strings.IndexAny(pattern, "*?[\\"); i >= 0 {
		prefix = pattern[:i]
	}
	all, err := st.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, o := range all {
		if ok, _ := path.Match(pattern, o.Key); ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// ListDir returns the objects directly "inside" dir (keys dir/NAME with no further "/"), sorted.
func ListDir(ctx context.Context, st Store, dir string) ([]Info, error) {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	if dir == "" {
		prefix = ""
	}
	all, err := st.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, o := range all {
		if !strings.Contains(o.Key[len(prefix):], "/") {
			out = append(out, o)
		}
	}
	return out, nil
}
