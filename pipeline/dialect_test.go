package pipeline

import (
	"math/rand"
	"strings"
	"testing"
)

func sp(s string) *string { return &s }

// Each dialect reads its database's export of the same values: tab, LF, CR, backslash, quote, the
// literal texts \N and NULL, empty vs NULL, UTF-8 (NUL for MySQL only), whatever the file extension.
func TestDialectsReadTheirExports(t *testing.T) {
	want := [][]*string{
		{sp("1"), sp("a\tb"), sp("l1\nl2"), sp("cr\r")},
		{sp("2"), sp(`back\slash`), sp(`"q"`), sp(`\N`)},
		{sp("3"), sp("NULL"), sp(""), nil},
		{sp("4"), sp("ünï"), sp(`,`), sp("\\")},
	}
	cases := []struct {
		dialect, file string
		text          string
		want          [][]*string
	}{
		{DialectPostgresText, "t.csv", "1\ta\\tb\tl1\\nl2\tcr\\r\n" +
			"2\tback\\\\slash\t\"q\"\t\\\\N\n" +
			"3\tNULL\t\t\\N\n" +
			"4\tünï\t,\t\\\\\n", want},
		{DialectPostgresCSV, "t.txt", "1,a\tb,\"l1\nl2\",\"cr\r\"\n" +
			"2,back\\slash,\"\"\"q\"\"\",\\N\n" +
			"3,NULL,\"\",\n" +
			"4,ünï,\",\",\\\n", want},
		{DialectMySQL, "t.csv", "1\ta\\\tb\tl1\\\nl2\tcr\r\n" +
			"2\tback\\\\slash\t\"q\"\t\\\\N\n" +
			"3\tNULL\t\t\\N\n" +
			"4\tünï\t,\t\\\\\n", want},
		{DialectMySQLCSV, "t.tsv", "1,\"a\tb\",\"l1\\\nl2\",\"cr\r\"\n" +
			"2,\"back\\\\slash\",\"\\\"q\\\"\",\"\\\\N\"\n" +
			"3,\"NULL\",\"\",\\N\n" +
			"4,\"ünï\",\",\",\"\\\\\"\n", want},
	}
	for _, c := range cases {
		got, bad := dialectParseFile(t, c.dialect, c.file, c.text)
		if len(bad) > 0 || !rowsEqual(got, c.want) {
			t.Errorf("%s: got\n%s\nbad %q", c.dialect, showRows(got), bad)
		}
	}
}

func dialectParseFile(t *testing.T, dialect, file, text string) ([][]*string, []string) {
	t.Helper()
	res := csvParse(t, text, SourceOptions{Dialect: dialect})
	var rows [][]*string
	for _, r := range res.Rows {
		var row []*string
		for _, f := range r.Fields {
			if f == csvNull {
				row = append(row, nil)
			} else {
				row = append(row, sp(f))
			}
		}
		rows = append(rows, row)
	}
	var bad []string
	for _, b := range res.Bad {
		bad = append(bad, b.Reason)
	}
	_ = file
	return rows, bad
}

func TestPostgresTextEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`\b\f\n\r\t\v\\`: "\b\f\n\r\t\v\\",
		`\101\1012\7\08`: "AA2\x07\x008",
		`\x41\x4a2\xg\x`: "AJ2xgx",
		`\q\"\,`:         `q",`,
		`\777`:           "\xff",
		`end\`:           `end\`,
	} {
		got := string(appendUnescaped(nil, []byte(in), '\\', escPostgres))
		if got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	// An escaped tab or line feed is the byte itself, inside the field.
	got, bad := dialectParse(t, DialectPostgresText, []byte("1\ta\\\tb\\\nc\n2\tx\n"), 2)
	if len(bad) > 0 || !rowsEqual(got, [][]*string{{sp("1"), sp("a\tb\nc")}, {sp("2"), sp("x")}}) {
		t.Errorf("got %s bad %q", showRows(got), bad)
	}
}

func TestMySQLEscapesAndNUL(t *testing.T) {
	got, bad := dialectParse(t, DialectMySQL, []byte("1\t\\0x\\Z\\b\\n\\r\\t\\q\n"), 2)
	if len(bad) > 0 || !rowsEqual(got, [][]*string{{sp("1"), sp("\x00x\x1a\b\n\r\tq")}}) {
		t.Errorf("got %s bad %q", showRows(got), bad)
	}
	// A quote is ordinary text in mysql (no ENCLOSED BY); a CR before the LF is data.
	got, bad = dialectParse(t, DialectMySQL, []byte("\"a\tb\"\r\n"), 0)
	if len(bad) > 0 || !rowsEqual(got, [][]*string{{sp(`"a`), sp("b\"\r")}}) {
		t.Errorf("got %s bad %q", showRows(got), bad)
	}
}

func TestDialectKnobs(t *testing.T) {
	// COPY … (FORMAT csv, NULL 'NULL', ESCAPE '\'): the escape works inside quotes before a quote or
	// itself only; elsewhere a backslash is text.
	res := csvParse(t, "1,\"a\\\"b\\\\c\\n\",NULL,,x\\y\n", SourceOptions{Dialect: DialectPostgresCSV, Escape: '\\', Null: "NULL"})
	csvCheck(t, res, []csvTestRow{{1, []string{"1", `a"b\c\n`, csvNull, "", `x\y`}, ""}}, nil)
	// mysql with ESCAPED BY '' writes NULL as the word NULL; --escape none reads it so.
	res = csvParse(t, "1\tNULL\ta\\b\n", SourceOptions{Dialect: DialectMySQL, NoEscape: true})
	csvCheck(t, res, []csvTestRow{{1, []string{"1", csvNull, `a\b`}, ""}}, nil)
	// mysql with ESCAPED BY '#' and FIELDS TERMINATED BY '|'.
	res = csvParse(t, "1|#N|a#|b|#\\N\n", SourceOptions{Dialect: DialectMySQL, Escape: '#', Separator: '|'})
	csvCheck(t, res, []csvTestRow{{1, []string{"1", csvNull, "a|b", `\N`}, ""}}, nil)
	// --quote none in csv: a quote is text.
	res = csvParse(t, "\"a,b\"\n", SourceOptions{NoQuote: true})
	csvCheck(t, res, []csvTestRow{{1, []string{`"a`, `b"`}, ""}}, nil)
	// --quote in mysql: ENCLOSED BY '\''.
	res = csvParse(t, "'a\tb'\t\\N\n", SourceOptions{Dialect: DialectMySQL, Quote: '\''})
	csvCheck(t, res, []csvTestRow{{1, []string{"a\tb", csvNull}, ""}}, nil)
	if _, err := NewCSVSource(strings.NewReader(""), "t", 0, SourceOptions{Dialect: "oracle"}); err == nil || !strings.Contains(err.Error(), "not one of csv, postgres-text") {
		t.Errorf("unknown dialect: %v", err)
	}
	// The byte order mark is data outside the csv dialect.
	res = csvParse(t, "\xEF\xBB\xBFa\tb\n", SourceOptions{Dialect: DialectMySQL})
	csvCheck(t, res, []csvTestRow{{1, []string{"\xEF\xBB\xBFa", "b"}, ""}}, nil)
}

// The field count comes from the column spec or the header, else the most common count among the
// first records: a malformed first line costs that line only.
func TestFieldCountNotFromFirstRecord(t *testing.T) {
	in := "1\t2\t3\n4\t5\n6\t7\n8\t9\n"
	for _, d := range []string{DialectCSV, DialectPostgresText, DialectMySQL} {
		res := csvParse(t, strings.ReplaceAll(in, "\t", map[string]string{DialectCSV: ","}[d]+map[bool]string{true: "", false: "\t"}[d == DialectCSV]), SourceOptions{Dialect: d})
		if len(res.Rows) != 3 || len(res.Bad) != 1 || res.Bad[0].Line != 1 {
			t.Errorf("%s: rows %+v bad %+v", d, res.Rows, res.Bad)
		}
	}
	// A column spec wins, and pads short rows with NULLs (ImportTsv).
	res := csvParse(t, "1,2,3\n4,5\n6,7,8,9\n", SourceOptions{ExpectedFields: 3, PadShort: true})
	csvCheck(t, res, []csvTestRow{{1, []string{"1", "2", "3"}, ""}, {2, []string{"4", "5", csvNull}, ""}},
		[]csvTestBad{{3, "ragged row: 4 fields, want 3", "6,7,8,9"}})
	// A tie goes to the count seen first.
	res = csvParse(t, "1,2\n3\n", SourceOptions{})
	csvCheck(t, res, []csvTestRow{{1, []string{"1", "2"}, ""}}, []csvTestBad{{2, "ragged row: 1 fields, want 2", "3"}})
}

// Escape-free lines take the same word-at-a-time path in every dialect; escaped fields decode into
// the batch without allocating per row.
func TestDialectEscapesDoNotAllocatePerRow(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString("12345\tsome\\ttext\\\\with\\nescapes\t\\N\tplain\n")
	}
	data := []byte(b.String())
	allocs := testing.AllocsPerRun(3, func() {
		dialectParseCount(t, DialectPostgresText, data)
	})
	t.Logf("%.0f allocations to read 20000 escaped postgres-text rows", allocs)
	if allocs > 400 {
		t.Errorf("%.0f allocations for 20000 escaped rows", allocs)
	}
}

// escape ∘ parse is the identity on random rows of each dialect's special bytes (the fuzz targets'
// property, over a fixed pseudo-random sample so that `make test` checks it too).
func TestDialectRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(19))
	alphabet := []string{"a", "\t", "\n", "\r", "\\", `"`, ",", "N", "0", "x", "7", "\x00", "ü", "\xEF\xBB\xBF", "b", "."}
	for _, d := range Dialects() {
		for iter := 0; iter < 100; iter++ {
			cols := 1 + rng.Intn(4)
			rows := make([][]*string, 1+rng.Intn(6))
			for i := range rows {
				rows[i] = make([]*string, cols)
				for j := range rows[i] {
					if rng.Intn(6) == 0 {
						continue // NULL
					}
					var b strings.Builder
					for n := rng.Intn(6); n > 0; n-- {
						b.WriteString(alphabet[rng.Intn(len(alphabet))])
					}
					rows[i][j] = sp(b.String())
				}
			}
			dialectRoundTrip(t, d, rows)
		}
	}
}
