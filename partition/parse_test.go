package partition

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseSplits(t *testing.T) {
	in := `# regions for orders

a
b\x00c
  c  
'd', 'e\x01',
["f", 'g\'h']
'i\\x41',
"j\"k",
m, not quoted
\xFF
`
	got, err := ParseSplits(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := keys("a", "b\x00c", "c", "d", "e\x01", "f", "g'h", "iA", "j\"k", "m, not quoted", "\xff")
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestParseSplitsCreateCommandList(t *testing.T) {
	got, err := ParseSplits(strings.NewReader(`['\x01', '\x02', 'k']`))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", keys("\x01", "\x02", "k")) {
		t.Fatalf("got %q", got)
	}
}

func TestParseSplitsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"b\na\n", "line 2: key \"a\" sorts before \"b\" on line 1"},
		{"a\n\n# c\na\n", "line 4: duplicate key \"a\" (also on line 1)"},
		{"a\n''\n", "line 2: empty key"},
		{"a\\x4\n", "line 1: truncated"},
		{"a\\xZZ\n", "line 1: bad \\x escape"},
		{"'abc\n", "line 1: unterminated"},
		{"'a' b\n", "line 1: unexpected"},
		{"[a]\n", "line 1: expected a quoted key"},
	} {
		_, err := ParseSplits(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSplits(%q) = %v, want error containing %q", c.in, err, c.want)
		}
	}
}

func TestParseSplitsEmpty(t *testing.T) {
	got, err := ParseSplits(strings.NewReader("\n# nothing\n"))
	if err != nil || len(got) != 0 {
		t.Fatalf("got %q, %v", got, err)
	}
}
