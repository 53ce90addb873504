package partition

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// FuzzParseSplits: any input gives split points or an error, never a panic; accepted split points are
// valid and survive WriteText → ParseSplits unchanged.
func FuzzParseSplits(f *testing.F) {
	for _, seed := range []string{
		"a\nb\n", `['\x01', 'k']`, "# c\n\\xFF\n", `create 't', 'd', SPLITS => ['a', "b\"c"]`,
		"  START_KEY |\n ---------- |\n            |\n       \\x01 |\n", "'a\\'b',\n", "[\n", "'", "\\x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSplits(strings.NewReader(in))
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ParseSplits(%q) accepted invalid split points: %v", in, err)
		}
		var buf bytes.Buffer
		if err := s.WriteText(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := ParseSplits(&buf)
		if err != nil {
			t.Fatalf("re-parsing %q: %v", buf.String(), err)
		}
		if fmt.Sprintf("%q", back) != fmt.Sprintf("%q", s) {
			t.Fatalf("round trip of %q: %q != %q", in, back, s)
		}
		r := NewRouter(s)
		for _, k := range s {
			if r.Region(k) != s.Region(k) {
				t.Fatalf("router disagrees on %q", k)
			}
		}
	})
}
