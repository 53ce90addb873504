package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// dialectEncode writes rows (nil = NULL) the way the dialect's database writes them with default
// options: PostgreSQL's CopyAttributeOutText/CSV and MySQL's select_export. It is the "escape" of the
// escape ∘ parse round trips; the real-server tests check the parser against the servers themselves.
func dialectEncode(dialect string, rows [][]*string) []byte {
	var b bytes.Buffer
	for _, row := range rows {
		for j, f := range row {
			if j > 0 {
				b.WriteByte(map[bool]byte{true: '\t', false: ','}[dialect == DialectPostgresText || dialect == DialectMySQL])
			}
			dialectEncodeField(&b, dialect, f)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func dialectEncodeField(b *bytes.Buffer, dialect string, f *string) {
	switch dialect {
	case DialectPostgresText:
		if f == nil {
			b.WriteString(`\N`)
			return
		}
		for i := 0; i < len(*f); i++ {
			switch c := (*f)[i]; c {
			case '\\':
				b.WriteString(`\\`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\v':
				b.WriteString(`\v`)
			default:
				b.WriteByte(c)
			}
		}
	case DialectCSV, DialectPostgresCSV:
		if f == nil {
			return
		}
		if *f != "" && !bytes.ContainsAny([]byte(*f), ",\"\r\n") && !(dialect == DialectCSV && len(*f) >= 3 && (*f)[:3] == "\xEF\xBB\xBF") {
			b.WriteString(*f)
			return
		}
		b.WriteByte('"')
		b.Write(bytes.ReplaceAll([]byte(*f), []byte(`"`), []byte(`""`)))
		b.WriteByte('"')
	case DialectMySQL, DialectMySQLCSV:
		if f == nil {
			b.WriteString(`\N`)
			return
		}
		enclosed := dialect == DialectMySQLCSV
		if enclosed {
			b.WriteByte('"')
		}
		for i := 0; i < len(*f); i++ {
			switch c := (*f)[i]; {
			case c == 0:
				b.WriteString(`\0`)
			case c == '\\' || c == '\n' || !enclosed && c == '\t' || enclosed && c == '"':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
		if enclosed {
			b.WriteByte('"')
		}
	}
}

// dialectParse reads data in dialect with the field count given (as --columns gives it), one byte
// at a time as well as whole, and returns the rows (nil = NULL) and the bad rows' reasons.
func dialectParse(t testing.TB, dialect string, data []byte, fields int) ([][]*string, []string) {
	t.Helper()
	var out [2][][]*string
	var bad []string
	for k, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data))} {
		src, err := NewCSVSource(r, "x.csv", 0, SourceOptions{Dialect: dialect, ExpectedFields: fields, BatchRows: 7})
		if err != nil {
			t.Fatal(err)
		}
		for {
			b, err := src.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < b.NumRows; i++ {
				row := make([]*string, b.NumCols)
				for j := range row {
					if f, null := b.Field(i, j); !null {
						s := string(f)
						row[j] = &s
					}
				}
				out[k] = append(out[k], row)
			}
			if k == 0 {
				for _, br := range b.Bad {
					bad = append(bad, br.Reason)
				}
			}
		}
	}
	if !rowsEqual(out[0], out[1]) {
		t.Fatalf("%s: whole and one-byte reads differ:\n%s\n%s", dialect, showRows(out[0]), showRows(out[1]))
	}
	return out[0], bad
}

// dialectRoundTrip checks parse(encode(rows)) == rows.
func dialectRoundTrip(t testing.TB, dialect string, rows [][]*string) {
	t.Helper()
	if len(rows) == 0 {
		return
	}
	data := dialectEncode(dialect, rows)
	got, bad := dialectParse(t, dialect, data, len(rows[0]))
	if len(bad) > 0 || !rowsEqual(got, rows) {
		t.Fatalf("%s: round trip of %q:\nwant %s\n got %s\nbad %q", dialect, data, showRows(rows), showRows(got), bad)
	}
}

func rowsEqual(a, b [][]*string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			x, y := a[i][j], b[i][j]
			if (x == nil) != (y == nil) || x != nil && *x != *y {
				return false
			}
		}
	}
	return true
}

func showRows(rows [][]*string) string {
	var b bytes.Buffer
	for _, r := range rows {
		for j, f := range r {
			if j > 0 {
				b.WriteString(" | ")
			}
			if f == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString(strconvQuote(*f))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// dialectParseCount reads data and returns the number of good rows (no per-row work of its own).
func dialectParseCount(t testing.TB, dialect string, data []byte) int {
	src, err := NewCSVSource(bytes.NewReader(data), "x", 0, SourceOptions{Dialect: dialect})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n += b.NumRows
		b.Release()
	}
}
