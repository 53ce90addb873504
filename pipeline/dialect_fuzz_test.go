package pipeline

import (
	"bytes"
	"strconv"
	"testing"
)

func strconvQuote(s string) string { return strconv.Quote(s) }

// fuzzRows turns fuzz bytes into rows: the first byte picks 1-4 columns, 0xFE separates fields and a
// field that is exactly 0xFD is NULL. The last row is padded with NULLs.
func fuzzRows(data []byte) [][]*string {
	if len(data) == 0 {
		return nil
	}
	cols := int(data[0])%4 + 1
	var rows [][]*string
	var row []*string
	for _, f := range bytes.Split(data[1:], []byte{0xFE}) {
		var p *string
		if !bytes.Equal(f, []byte{0xFD}) {
			s := string(f)
			p = &s
		}
		row = append(row, p)
		if len(row) == cols {
			rows, row = append(rows, row), nil
		}
	}
	if len(row) > 0 {
		for len(row) < cols {
			row = append(row, nil)
		}
		rows = append(rows, row)
	}
	return rows
}

// dialectFuzzSeeds are a few tiny inputs holding each dialect's special bytes.
var dialectFuzzSeeds = []string{
	"\x01a\tb\xfe\\N\xfe\xfd\xfe\xfe",
	"\x02x\ny\r\xfe\"q\",\\\xfe\x00\\0\xfe\xef\xbb\xbfbom",
	"\x00\\x41\\101\\\n",
}

func fuzzDialect(f *testing.F, dialect string) {
	for _, s := range dialectFuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := fuzzRows(data)
		dialectRoundTrip(t, dialect, rows)
		// Arbitrary bytes in the dialect must not panic, and must account for themselves.
		dialectParse(t, dialect, data, 0)
	})
}

func FuzzDialectCSV(f *testing.F)          { fuzzDialect(f, DialectCSV) }
func FuzzDialectPostgresText(f *testing.F) { fuzzDialect(f, DialectPostgresText) }
func FuzzDialectPostgresCSV(f *testing.F)  { fuzzDialect(f, DialectPostgresCSV) }
func FuzzDialectMySQL(f *testing.F)        { fuzzDialect(f, DialectMySQL) }
func FuzzDialectMySQLCSV(f *testing.F)     { fuzzDialect(f, DialectMySQLCSV) }
