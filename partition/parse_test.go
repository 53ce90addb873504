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

func TestParseSplitsShellCommand(t *testing.T) {
	got, err := ParseSplits(strings.NewReader(`create 'orders', 'd', {SPLITS => ['\x01', 'k|x']}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", keys("\x01", "k|x")) {
		t.Fatalf("got %q", got)
	}
}

// TestParseSplitsListRegions reads list_regions output as printed by hbase-shell's list_regions.rb
// (" %<width>s |" per column, keys in toStringBinary), including a key containing '|'.
func TestParseSplitsListRegions(t *testing.T) {
	in := `hbase:001:0> list_regions 'orders'
                SERVER_NAME |                                       REGION_NAME |  START_KEY |    END_KEY |  SIZE |   REQ |   LOCALITY |
 -------------------------- | ------------------------------------------------- | ---------- | ---------- | ----- | ----- | ---------- |
 rs1.example.com,16020,1700 | orders,,1700000000000.0123456789abcdef0123456789. |            |       \x01 |     0 |     0 |        0.0 |
 rs2.example.com,16020,1700 | orders,\x01,1700000000000.1123456789abcdef012345. |       \x01 |        k|x |     0 |     0 |        0.0 |
 rs1.example.com,16020,1700 | orders,k|x,1700000000000.2123456789abcdef0123456. |        k|x |            |     0 |     0 |        0.0 |
 3 rows
Took 0.0420 seconds
`
	got, err := ParseSplits(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", keys("\x01", "k|x")) {
		t.Fatalf("got %q", got)
	}
	// Projected to the START_KEY column only.
	in = "  START_KEY |\n ---------- |\n            |\n       \\x01 |\n          k |\n 3 rows\n"
	got, err = ParseSplits(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", keys("\x01", "k")) {
		t.Fatalf("projected: got %q", got)
	}
	// A row that does not line up is an error, not a silently lost split point.
	in = "  START_KEY |\n ---------- |\n            |\n       \\x01 |\n        k |\n"
	if _, err := ParseSplits(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "line 5: list_regions row does not line up") {
		t.Fatalf("misaligned row: %v", err)
	}
}

// isShellPrompt says what shellPrompt.MatchString says: prompts of both shells, near misses, lines
// that start with or contain "hbase".
func TestIsShellPrompt(t *testing.T) {
	for _, s := range []string{"hbase:001:0> list_regions 't'", "hbase(main):001:0> x", "hbase:1:2> ", "hbase:001:0>x",
		"hbase", "hbas", "", "hbase(main):a:0> ", " hbase:001:0> x", "xhbase:001:0> x", "hbase:001:0>  ", "HBASE:001:0> x",
		"'row1'", "hbase-row-1", "hbase(main:001:0> x"} {
		if got, want := isShellPrompt(s), shellPrompt.MatchString(s); got != want {
			t.Errorf("isShellPrompt(%q) = %v, shellPrompt says %v", s, got, want)
		}
	}
}
