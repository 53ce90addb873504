package partition

import (
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

func TestCreateTableCommand(t *testing.T) {
	got := CreateTableCommand("orders", []string{"d"}, keys("\x01", "k"))
	want := `create 'orders', 'd', SPLITS => ['\x01', 'k']`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	got = CreateTableCommand("ns:t", []string{"d", "it's"}, nil)
	want = `create 'ns:t', 'd', 'it\'s'`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// rubySingleQuoted decodes a Ruby single-quoted literal ('...' with \\ and \' escapes), as Ruby does.
func rubySingleQuoted(t *testing.T, lit string) string {
	t.Helper()
	if len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
		t.Fatalf("not a single-quoted literal: %s", lit)
	}
	body := lit[1 : len(lit)-1]
	var out []byte
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && i+1 < len(body) && (body[i+1] == '\\' || body[i+1] == '\'') {
			out = append(out, body[i+1])
			i++
			continue
		}
		if c == '\'' {
			t.Fatalf("unescaped quote inside %s", lit)
		}
		out = append(out, c)
	}
	return string(out)
}

// TestShellSplitLiteralRoundTrip models what the HBase shell does with a split literal — Ruby decodes
// the single-quoted string, then admin.rb applies Bytes.toBytesBinary — and checks that every tricky
// key survives: quotes, backslashes, text that looks like an escape, high bytes, '#{'.
func TestShellSplitLiteralRoundTrip(t *testing.T) {
	tricky := [][]byte{
		[]byte("'"), []byte(`\`), []byte(`\x41`), []byte(`\\x41`), []byte("#{x}"), []byte(`"`),
		{0x00}, {0xff, 0x80}, []byte("a b"), []byte("it's\\x27"),
	}
	for v := 0; v < 256; v++ {
		tricky = append(tricky, []byte{byte(v), 'z'})
	}
	for _, k := range tricky {
		lit := ShellSplitLiteral(k)
		ruby := rubySingleQuoted(t, lit)
		back, err := kv.FromStringBinary(ruby) // Bytes.toBytesBinary
		if err != nil {
			t.Fatalf("%q → %s: %v", k, lit, err)
		}
		if string(back) != string(k) {
			t.Errorf("%q → %s → %q", k, lit, back)
		}
	}
	if got := ShellSplitLiteral([]byte("it's")); got != `'it\x27s'` {
		t.Errorf("ShellSplitLiteral(it's) = %s", got)
	}
}
