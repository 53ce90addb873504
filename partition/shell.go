package partition

import (
	"strings"

	"github.com/hfload/hfload/internal/kv"
)

// CreateTableCommand returns an HBase shell command creating table with the given column families and
// split points, e.g. `create 'orders', 'd', SPLITS => ['\x01', 'k']`.
//
// Escaping. The HBase shell (hbase-shell admin.rb) passes every SPLITS string through
// Bytes.toBytesBinary, so each split point is written in Bytes.toStringBinary form inside a Ruby
// SINGLE-quoted string, where Ruby leaves \xNN untouched and HBase decodes it. Double quotes would be
// wrong: Ruby would decode "\xFF" itself into a non-UTF-8 string that JRuby mangles on its way to
// Java, "\x5Cx41" (a literal backslash followed by x41) would be decoded twice into "A", and "#{" would
// interpolate. toStringBinary never emits a bare backslash, and a single quote is written as \x27, so
// no Ruby escape is ever needed inside a split string. Table and family names (which the shell does not
// decode) are single-quoted with Ruby's \\ and \' escapes.
func CreateTableCommand(table string, families []string, s Splits) string {
	var sb strings.Builder
	sb.WriteString("create ")
	sb.WriteString(rubySingleQuote(table))
	for _, f := range families {
		sb.WriteString(", ")
		sb.WriteString(rubySingleQuote(f))
	}
	if len(s) > 0 {
		sb.WriteString(", SPLITS => [")
		for i, k := range s {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(ShellSplitLiteral(k))
		}
		sb.WriteString("]")
	}
	return sb.String()
}

// ShellSplitLiteral returns the Ruby string literal that the HBase shell turns into exactly the bytes
// of key when it appears in SPLITS => [...]: single-quoted toStringBinary with ' written as \x27.
func ShellSplitLiteral(key []byte) string {
	t := kv.ToStringBinary(key)
	return "'" + strings.ReplaceAll(t, "'", `\x27`) + "'"
}

// rubySingleQuote quotes s as a Ruby single-quoted string literal (only \\ and \' are escapes there).
func rubySingleQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s + "'"
}
