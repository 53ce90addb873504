package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// csvTestRow is one parsed row in a test-friendly form: NULL fields are "<NULL>".
type csvTestRow struct {
	Line   int64
	Fields []string
	Raw    string
}

type csvTestBad struct {
	Line   int64
	Reason string
	Raw    string
}

type csvTestResult struct {
	Header []string
	Rows   []csvTestRow
	Bad    []csvTestBad
}

const csvNull = "<NULL>"

// csvReadAll reads a whole source, checking batch invariants on the way.
func csvReadAll(t testing.TB, src *CSVSource) csvTestResult {
	t.Helper()
	res := csvTestResult{Header: src.Header()}
	var nextRow int64
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if b.FirstRow != nextRow {
			t.Fatalf("batch FirstRow %d, want %d", b.FirstRow, nextRow)
		}
		nextRow += int64(b.NumRows)
		if len(b.Ends) != b.NumRows*b.NumCols || len(b.Nulls) != len(b.Ends) || len(b.Lines) != b.NumRows || len(b.RawEnds) != b.NumRows {
			t.Fatalf("batch shape: rows %d cols %d ends %d nulls %d lines %d rawends %d",
				b.NumRows, b.NumCols, len(b.Ends), len(b.Nulls), len(b.Lines), len(b.RawEnds))
		}
		for i := 0; i < b.NumRows; i++ {
			row := csvTestRow{Line: b.Lines[i], Raw: string(b.Raw(i))}
			for j := 0; j < b.NumCols; j++ {
				f, null := b.Field(i, j)
				if null {
					if len(f) != 0 {
						t.Fatalf("NULL field with text %q", f)
					}
					row.Fields = append(row.Fields, csvNull)
				} else {
					row.Fields = append(row.Fields, string(f))
				}
			}
			res.Rows = append(res.Rows, row)
		}
		for _, bad := range b.Bad {
			res.Bad = append(res.Bad, csvTestBad{bad.Line, bad.Reason, string(bad.Raw)})
		}
	}
	return res
}

// csvParse parses input with opts three ways (big reads, one-byte reads, batches of one row) and
// fails unless all agree; it returns the result.
func csvParse(t testing.TB, input string, opts SourceOptions) csvTestResult {
	t.Helper()
	var results []csvTestResult
	for k, mk := range []func() io.Reader{
		func() io.Reader { return strings.NewReader(input) },
		func() io.Reader { return iotest.OneByteReader(strings.NewReader(input)) },
		func() io.Reader { return iotest.HalfReader(strings.NewReader(input)) },
	} {
		o := opts
		if k == 2 {
			o.BatchRows = 1
		}
		src, err := NewCSVSource(mk(), "test.csv", 0, o)
		if err != nil {
			t.Fatalf("NewCSVSource: %v", err)
		}
		results = append(results, csvReadAll(t, src))
	}
	for k := 1; k < len(results); k++ {
		if !reflect.DeepEqual(results[0], results[k]) {
			t.Fatalf("reader %d disagrees:\n%+v\nvs\n%+v", k, results[0], results[k])
		}
	}
	return results[0]
}

func csvCheck(t *testing.T, got csvTestResult, wantRows []csvTestRow, wantBad []csvTestBad) {
	t.Helper()
	if len(got.Rows) != len(wantRows) {
		t.Errorf("got %d rows, want %d: %+v", len(got.Rows), len(wantRows), got.Rows)
	}
	for i := 0; i < min(len(got.Rows), len(wantRows)); i++ {
		g, w := got.Rows[i], wantRows[i]
		if g.Line != w.Line || !reflect.DeepEqual(g.Fields, w.Fields) || (w.Raw != "" && g.Raw != w.Raw) {
			t.Errorf("row %d:\n got  line %d %q raw %q\n want line %d %q raw %q", i, g.Line, g.Fields, g.Raw, w.Line, w.Fields, w.Raw)
		}
	}
	if len(got.Bad) != len(wantBad) {
		t.Errorf("got %d bad rows, want %d: %+v", len(got.Bad), len(wantBad), got.Bad)
	}
	for i := 0; i < min(len(got.Bad), len(wantBad)); i++ {
		if got.Bad[i] != wantBad[i] {
			t.Errorf("bad %d:\n got  %+v\n want %+v", i, got.Bad[i], wantBad[i])
		}
	}
}

func TestCSVPostgresCopyHeader(t *testing.T) {
	// COPY t TO STDOUT WITH (FORMAT csv, HEADER): NULL is an empty unquoted field, '' is "".
	in := "id,name,note,amount\n" +
		"1,alice,,12.50\n" +
		"2,\"\",\"said \"\"hi\"\", then left\",\n" +
		"3,\"multi\nline\r\nnote\",x,7\n" +
		"4,bob,\"a,b\",-1\n"
	got := csvParse(t, in, SourceOptions{Header: true})
	if want := []string{"id", "name", "note", "amount"}; !reflect.DeepEqual(got.Header, want) {
		t.Fatalf("header %q, want %q", got.Header, want)
	}
	csvCheck(t, got, []csvTestRow{
		{2, []string{"1", "alice", csvNull, "12.50"}, "1,alice,,12.50"},
		{3, []string{"2", "", `said "hi", then left`, csvNull}, `2,"","said ""hi"", then left",`},
		{4, []string{"3", "multi\nline\r\nnote", "x", "7"}, "3,\"multi\nline\r\nnote\",x,7"},
		{7, []string{"4", "bob", "a,b", "-1"}, `4,bob,"a,b",-1`},
	}, nil)
}

func TestCSVMySQLOutfileTab(t *testing.T) {
	// SELECT ... INTO OUTFILE (defaults): tab separated, \N for NULL, no enclosure, empty = ''.
	in := "10\tWidget \"Pro\"\t\\N\t3.5\n" +
		"11\t\t2024-01-02\t\\N\n" +
		"12\tit's\t\"\\N\"\t0\n"
	got := csvParse(t, in, SourceOptions{Separator: '\t', Null: `\N`})
	csvCheck(t, got, []csvTestRow{
		{1, []string{"10", `Widget "Pro"`, csvNull, "3.5"}, ""},
		{2, []string{"11", "", "2024-01-02", csvNull}, ""},
		{3, []string{"12", "it's", `\N`, "0"}, ""},
	}, nil)
}

func TestCSVOracleSpoolPipe(t *testing.T) {
	// SQL*Plus: SET COLSEP '|' pads columns with spaces; a NULL number is blanks.
	in := "ID        |NAME      |SALARY\r\n" +
		"         1|SMITH     |    800.5\r\n" +
		"         2|ALLEN     |         \r\n" +
		"         3|O\"BRIEN   |     1600\r\n"
	got := csvParse(t, in, SourceOptions{Separator: '|', Header: true, TrimSpace: true})
	if want := []string{"ID", "NAME", "SALARY"}; !reflect.DeepEqual(got.Header, want) {
		t.Fatalf("header %q, want %q", got.Header, want)
	}
	csvCheck(t, got, []csvTestRow{
		{2, []string{"1", "SMITH", "800.5"}, "         1|SMITH     |    800.5"},
		{3, []string{"2", "ALLEN", csvNull}, ""},
		{4, []string{"3", `O"BRIEN`, "1600"}, ""},
	}, nil)
	// Without TrimSpace the padding is data.
	got = csvParse(t, in, SourceOptions{Separator: '|', Header: true})
	if f := got.Rows[1].Fields; f[2] != "         " || f[0] != "         2" {
		t.Errorf("untrimmed fields %q", f)
	}
}

func TestCSVSqoopDefault(t *testing.T) {
	// Sqoop import --as-textfile: comma separated, "null" for NULL (--null-string default), no quoting.
	in := "1,abc,null,2019-01-01 00:00:00.0\n2,null,x y,null\n"
	got := csvParse(t, in, SourceOptions{Null: "null"})
	csvCheck(t, got, []csvTestRow{
		{1, []string{"1", "abc", csvNull, "2019-01-01 00:00:00.0"}, ""},
		{2, []string{"2", csvNull, "x y", csvNull}, ""},
	}, nil)
}

func TestCSVBOMCRLFNoFinalNewline(t *testing.T) {
	in := "\xEF\xBB\xBFa;b\r\n1;\"x\"\r\n2;y"
	got := csvParse(t, in, SourceOptions{Separator: ';', Header: true})
	if want := []string{"a", "b"}; !reflect.DeepEqual(got.Header, want) {
		t.Fatalf("header %q (BOM must be stripped)", got.Header)
	}
	csvCheck(t, got, []csvTestRow{
		{2, []string{"1", "x"}, `1;"x"`},
		{3, []string{"2", "y"}, "2;y"},
	}, nil)
}

func TestCSVRaggedAndBrokenQuotes(t *testing.T) {
	in := "a,b,c\n" + // 1 header
		"1,2,3\n" + // 2 good
		"1,2\n" + // 3 ragged
		"1,2,3,4\n" + // 4 ragged
		"\"x\"y,2,3\n" + // 5 text after closing quote
		"ok,\"q\"\"\",z\n" + // 6 good
		"\"bad\"z,\"multi\nline\",3\n" + // 7-8 bad, spans two lines
		"5,6,7\n" + // 9 good
		"7,\"never closed,8\n" + // 10 unterminated: only this line is lost
		"8,9,10\n" // 11 good
	got := csvParse(t, in, SourceOptions{Header: true})
	csvCheck(t, got, []csvTestRow{
		{2, []string{"1", "2", "3"}, ""},
		{6, []string{"ok", `q"`, "z"}, ""},
		{9, []string{"5", "6", "7"}, ""},
		{11, []string{"8", "9", "10"}, ""},
	}, []csvTestBad{
		{3, "ragged row: 2 fields, want 3", "1,2"},
		{4, "ragged row: 4 fields, want 3", "1,2,3,4"},
		{5, "text after closing quote", `"x"y,2,3`},
		{7, "text after closing quote", "\"bad\"z,\"multi\nline\",3"},
		{10, "unterminated quoted field", `7,"never closed,8`},
	})
}

func TestCSVFirstRowSetsFieldCount(t *testing.T) {
	in := "1,2\n3\n4,5\n"
	csvCheck(t, csvParse(t, in, SourceOptions{}), []csvTestRow{
		{1, []string{"1", "2"}, ""},
		{3, []string{"4", "5"}, ""},
	}, []csvTestBad{{2, "ragged row: 1 fields, want 2", "3"}})
	// ExpectedFields overrides the first row.
	csvCheck(t, csvParse(t, in, SourceOptions{ExpectedFields: 1}), []csvTestRow{
		{2, []string{"3"}, ""},
	}, []csvTestBad{{1, "ragged row: 2 fields, want 1", "1,2"}, {3, "ragged row: 2 fields, want 1", "4,5"}})
}

func TestCSVBlankLines(t *testing.T) {
	// Blank lines are skipped in multi-column files...
	csvCheck(t, csvParse(t, "\n1,2\n\r\n\n3,4\n\n", SourceOptions{}), []csvTestRow{
		{2, []string{"1", "2"}, ""},
		{5, []string{"3", "4"}, ""},
	}, nil)
	// ...but are NULL rows in a single-column file (PostgreSQL's NULL in a one-column COPY).
	csvCheck(t, csvParse(t, "v\nx\n\n\"\"\ny\n", SourceOptions{Header: true}), []csvTestRow{
		{2, []string{"x"}, ""},
		{3, []string{csvNull}, ""},
		{4, []string{""}, `""`},
		{5, []string{"y"}, ""},
	}, nil)
}

func TestCSVQuotedEdgeCases(t *testing.T) {
	in := "\"\",\"\"\"\",\"a\r\nb\"\n" + // empty, one quote, CRLF inside quotes kept
		"\"x\",y\"z,\"\"\r\n" + // quote inside unquoted field is text
		"\"last\",\"at eof\""
	csvCheck(t, csvParse(t, in, SourceOptions{}), []csvTestRow{
		{1, []string{"", `"`, "a\r\nb"}, ""},
		{3, []string{"x", `y"z`, ""}, `"x",y"z,""`},
	}, []csvTestBad{{4, "ragged row: 2 fields, want 3", `"last","at eof"`}})
}

func TestCSVCustomQuoteAndSeparators(t *testing.T) {
	in := "'a|b'|'it''s'||x\n"
	csvCheck(t, csvParse(t, in, SourceOptions{Separator: '|', Quote: '\''}), []csvTestRow{
		{1, []string{"a|b", "it's", csvNull, "x"}, ""},
	}, nil)
	for _, o := range []SourceOptions{{Separator: '\n'}, {Quote: '\r'}, {Separator: '"'}} {
		if _, err := NewCSVSource(strings.NewReader("x"), "t", 0, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestCSVHeaderErrors(t *testing.T) {
	if _, err := NewCSVSource(strings.NewReader("a,b\n1,2\n"), "t", 0, SourceOptions{Header: true, ExpectedFields: 3}); err == nil || !strings.Contains(err.Error(), "header has 2 fields, want 3") {
		t.Errorf("header/expected mismatch: %v", err)
	}
	if _, err := NewCSVSource(strings.NewReader("\"a,b\n"), "t", 0, SourceOptions{Header: true}); err == nil || !strings.Contains(err.Error(), "unterminated") {
		t.Errorf("broken header: %v", err)
	}
	src, err := NewCSVSource(strings.NewReader(""), "t", 0, SourceOptions{Header: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("empty file: %v, want EOF", err)
	}
}

func TestCSVOverlongRecords(t *testing.T) {
	long := strings.Repeat("x", 5000)
	in := "1,2\n" + long + "," + long + "\n3,4\n5,\"" + long + "\n6,7\n"
	got := csvParse(t, in, SourceOptions{MaxRecordBytes: 1000})
	csvCheck(t, got, []csvTestRow{
		{1, []string{"1", "2"}, ""},
		{3, []string{"3", "4"}, ""},
		{5, []string{"6", "7"}, ""},
	}, []csvTestBad{
		{2, "record longer than 1000 bytes", got.Bad[0].Raw},
		{4, "record longer than 1000 bytes", got.Bad[1].Raw},
	})
	if r := got.Bad[0].Raw; len(r) != 1001 || strings.Trim(r, "x") != "" {
		t.Errorf("overlong raw: %d bytes", len(r))
	}
	if r := got.Bad[1].Raw; len(r) != 1001 || !strings.HasPrefix(r, "5,\"xxx") {
		t.Errorf("overlong quoted raw: %d bytes", len(r))
	}
	// A quoted field that closes but makes the record too long: its first line is reported and the
	// rest is read as records (there is no better guess when the end cannot be seen).
	got = csvParse(t, "a,\"x\n"+strings.Repeat("y\n", 600)+"\"\n1,2\n", SourceOptions{MaxRecordBytes: 1000})
	if len(got.Bad) != 3 || got.Bad[0] != (csvTestBad{1, "record longer than 1000 bytes", `a,"x`}) ||
		got.Bad[1] != (csvTestBad{602, "unterminated quoted field", `"`}) ||
		got.Bad[2] != (csvTestBad{603, "ragged row: 2 fields, want 1", "1,2"}) {
		t.Errorf("bad rows %+v", got.Bad)
	}
	if len(got.Rows) != 600 || got.Rows[0].Line != 2 || got.Rows[599].Line != 601 || got.Rows[599].Fields[0] != "y" {
		t.Errorf("%d rows", len(got.Rows))
	}
}

func TestCSVBatching(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&sb, "%d,\"v%d\",%s\n", i, i, strings.Repeat("p", i%7))
	}
	src, err := NewCSVSource(strings.NewReader(sb.String()), "t", 3, SourceOptions{BatchRows: 3000})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var row int64
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.FileIndex != 3 || b.Source != "t" || b.FirstRow != row {
			t.Fatalf("batch meta %d %q %d", b.FileIndex, b.Source, b.FirstRow)
		}
		for i := 0; i < b.NumRows; i++ {
			n := row + int64(i)
			f0, _ := b.Field(i, 0)
			f1, _ := b.Field(i, 1)
			f2, null := b.Field(i, 2)
			if string(f0) != fmt.Sprint(n) || string(f1) != fmt.Sprintf("v%d", n) || len(f2) != int(n%7) || null != (n%7 == 0) || b.Lines[i] != n+1 {
				t.Fatalf("row %d: %q %q %q %v line %d", n, f0, f1, f2, null, b.Lines[i])
			}
		}
		row += int64(b.NumRows)
		sizes = append(sizes, b.NumRows)
	}
	if !reflect.DeepEqual(sizes, []int{3000, 3000, 3000, 1000}) {
		t.Errorf("batch sizes %v", sizes)
	}
}

func TestCSVContextCancel(t *testing.T) {
	src, err := NewCSVSource(strings.NewReader("1\n"), "t", 0, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := src.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next after cancel: %v", err)
	}
}

func TestCSVReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader("1,2\n3,"), iotest.ErrReader(boom))
	src, err := NewCSVSource(r, "f.csv", 0, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Next(context.Background())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "f.csv") {
		t.Errorf("read error %v", err)
	}
}

// TestCSVMatchesRFC4180Writer round-trips generated fields through a writer that quotes everything
// needing it, with and without CRLF.
func TestCSVRoundTrip(t *testing.T) {
	vals := []string{"plain", "", "with,comma", "with \"quote\"", "multi\nline", "crlf\r\ninside", " spaced ", "\"", "ünïcödé"}
	var buf bytes.Buffer
	var want [][]string
	for i := 0; i < 200; i++ {
		var row []string
		for j := 0; j < 4; j++ {
			v := vals[(i*7+j*3)%len(vals)]
			row = append(row, v)
			if j > 0 {
				buf.WriteByte(',')
			}
			if v == "" || strings.ContainsAny(v, ",\"\r\n") {
				buf.WriteString(`"` + strings.ReplaceAll(v, `"`, `""`) + `"`)
			} else {
				buf.WriteString(v)
			}
		}
		want = append(want, row)
		if i%2 == 0 {
			buf.WriteString("\r\n")
		} else {
			buf.WriteString("\n")
		}
	}
	got := csvParse(t, buf.String(), SourceOptions{})
	if len(got.Rows) != len(want) || len(got.Bad) != 0 {
		t.Fatalf("%d rows, %d bad", len(got.Rows), len(got.Bad))
	}
	line := int64(1)
	for i, r := range got.Rows {
		if !reflect.DeepEqual(r.Fields, want[i]) || r.Line != line {
			t.Fatalf("row %d line %d: %q, want line %d %q", i, r.Line, r.Fields, line, want[i])
		}
		line += int64(strings.Count(r.Raw, "\n")) + 1
	}
}

func TestCSVMySQLEscapes(t *testing.T) {
	// SELECT ... INTO OUTFILE with the defaults (FIELDS TERMINATED BY '\t' ESCAPED BY '\\'): an
	// embedded tab, newline and backslash are escaped; \N is NULL; an empty field is ''.
	in := "1\ttab\\\there\t\\N\n" +
		"2\tline\\\nbreak\tC:\\\\dir\n" +
		"3\t\t\\0x\\Z\n" +
		"4\t\"q\\\"uoted\"\tlast\\\\\n"
	got := csvParse(t, in, SourceOptions{Separator: '\t', Escape: '\\', Null: `\N`})
	csvCheck(t, got, []csvTestRow{
		{1, []string{"1", "tab\there", csvNull}, "1\ttab\\\there\t\\N"},
		{2, []string{"2", "line\nbreak", `C:\dir`}, "2\tline\\\nbreak\tC:\\\\dir"},
		{4, []string{"3", "", "\x00x\x1a"}, ""},
		{5, []string{"4", `q"uoted`, `last\`}, ""},
	}, nil)
	// Without a Null marker the empty unquoted field is NULL, as everywhere else.
	if f := csvParse(t, "3\t\t\\N\n", SourceOptions{Separator: '\t', Escape: '\\'}).Rows[0].Fields; f[1] != csvNull || f[2] != csvNull {
		t.Errorf("fields %q", f)
	}
	// With ENCLOSED BY '"' MySQL escapes the quote inside quoted fields.
	in = "\"a\\\"b\",\"x\\\\\",\\N,\"\"\n"
	csvCheck(t, csvParse(t, in, SourceOptions{Escape: '\\'}), []csvTestRow{
		{1, []string{`a"b`, `x\`, csvNull, ""}, ""},
	}, nil)
	if _, err := NewCSVSource(strings.NewReader(""), "t", 0, SourceOptions{Escape: ','}); err == nil {
		t.Error("escape equal to separator accepted")
	}
}

func TestCSVTrimSpaceAroundQuotes(t *testing.T) {
	in := `1, "a, b" ,  " keep "` + "\n" + `2,"x"  ,"y"  ` + "\r\n" + `3 , c ,"d"` + "\n"
	csvCheck(t, csvParse(t, in, SourceOptions{TrimSpace: true}), []csvTestRow{
		{1, []string{"1", "a, b", " keep "}, `1, "a, b" ,  " keep "`},
		{2, []string{"2", "x", "y"}, `2,"x"  ,"y"  `},
		{3, []string{"3", "c", "d"}, ""},
	}, nil)
	// Without TrimSpace the same text is strict: a space before a quote makes the field unquoted,
	// a space after a closing quote is an error.
	csvCheck(t, csvParse(t, in, SourceOptions{}), []csvTestRow{
		{1, []string{"1", ` "a`, ` b" `, `  " keep "`}, ""},
	}, []csvTestBad{
		{2, "text after closing quote", `2,"x"  ,"y"  `},
		{3, "ragged row: 3 fields, want 4", `3 , c ,"d"`},
	})
}

// appendUnquotedLine (the word-at-a-time path for quote-free lines) splits and NULLs fields exactly as
// appendUnquoted per separator does, for any separator, NULL marker, field lengths around the word size
// and a batch that already holds data and fields (several lines into one batch, so that its slices fill
// up and grow).
func TestCSVUnquotedLineMatchesPerField(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	alphabet := []byte("ab,|\t\\N \x00\xff")
	for iter := 0; iter < 20000; iter++ {
		sep := []byte{',', '|', '\t', 0, 0xff}[rng.Intn(5)]
		null := []string{"", `\N`, "NULL"}[rng.Intn(3)]
		s := &CSVSource{sep: sep, null: null}
		prefix := []byte("xyz")[:rng.Intn(4)]
		var got, want Batch
		got.Data = append(got.Data, prefix...)
		want.Data = append(want.Data, prefix...)
		if rng.Intn(2) == 0 {
			got.Ends, got.Nulls = make([]int32, 0, rng.Intn(8)), make([]bool, 0, rng.Intn(8))
		}
		for lines := 1 + rng.Intn(3); lines > 0; lines-- {
			line := make([]byte, rng.Intn(40), 48)[:rng.Intn(40)]
			for i := range line {
				line[i] = alphabet[rng.Intn(len(alphabet))]
				if rng.Intn(6) == 0 {
					line[i] = sep
				}
			}
			if rng.Intn(4) == 0 && len(line) > 3 {
				copy(line[rng.Intn(len(line)-2):], null)
			}
			n := s.appendUnquotedLine(&got, line)
			wantN := 0
			for rest := line; ; {
				j := bytes.IndexByte(rest, sep)
				wantN++
				if j < 0 {
					s.appendUnquoted(&want, rest)
					break
				}
				s.appendUnquoted(&want, rest[:j])
				rest = rest[j+1:]
			}
			if n != wantN || !bytes.Equal(got.Data, want.Data) || !slices.Equal(got.Ends, want.Ends) || !slices.Equal(got.Nulls, want.Nulls) {
				t.Fatalf("line %q sep %q null %q:\n got %d fields %q %v %v\nwant %d fields %q %v %v", line, sep, null,
					n, got.Data, got.Ends, got.Nulls, wantN, want.Data, want.Ends, want.Nulls)
			}
		}
	}
}

// TestCSVPlainLinesMatchParseRecord reads random inputs made mostly of usual records (one quote-free
// line with the expected fields) among quoted, escaped, blank, short, ragged, CRLF and overlong ones,
// twice: with Next taking the usual records in plainLines' loop and with every record through
// parseRecord. The batches must be equal field for field (data, ends, NULLs, line numbers, raw text, bad
// rows and where each batch ends), with big reads and with one-byte reads.
func TestCSVPlainLinesMatchParseRecord(t *testing.T) {
	type batch struct {
		NumRows, NumCols int
		FirstRow         int64
		Data, RawData    []byte
		Ends, RawEnds    []int32
		Nulls            []bool
		Lines            []int64
		Bad              []BadRow
	}
	rng := rand.New(rand.NewSource(17))
	plainSeen := 0
	for iter := 0; iter < 3000; iter++ {
		sep := []byte{',', '|', '\t'}[rng.Intn(3)]
		opts := SourceOptions{Separator: sep, BatchRows: 1 + rng.Intn(6), ExpectedFields: rng.Intn(4),
			PadShort: rng.Intn(4) == 0, MaxRecordBytes: []int{0, 12, 30}[rng.Intn(3)]}
		if rng.Intn(4) == 0 {
			opts.Escape = '\\'
		}
		switch rng.Intn(6) {
		case 0, 1:
			opts.Dialect = DialectMySQL
		case 2: // its escape works inside quotes only: plainLines leaves quoted records to parseQuoted
			opts.Dialect = DialectPostgresCSV
		}
		var in []byte
		for lines := rng.Intn(12); lines > 0; lines-- {
			fields := 3
			if rng.Intn(5) == 0 {
				fields = 1 + rng.Intn(5)
			}
			for f := 0; f < fields; f++ {
				if f > 0 {
					in = append(in, sep)
				}
				if rng.Intn(5) == 0 { // a quoted field: separators, "" and line feeds inside, text after it
					in = append(in, '"')
					for n := rng.Intn(12); n > 0; n-- {
						in = append(in, []string{"a", "b", "0", string(sep), `""`, "\n", "\r", `\`}[rng.Intn(8)]...)
					}
					if rng.Intn(8) > 0 {
						in = append(in, '"')
					}
					if rng.Intn(6) > 0 {
						continue // the field ends with its closing quote
					}
				}
				for n := rng.Intn(12); n > 0; n-- {
					in = append(in, "abcdefgh0123"[rng.Intn(12)])
				}
				switch rng.Intn(25) {
				case 0:
					in = append(in, '"')
				case 1:
					in = append(in, '\\')
				case 2:
					in = append(in, '\r')
				}
			}
			switch rng.Intn(8) {
			case 0:
				in = append(in, '\r', '\n')
			case 1:
				in = append(in, '\n', '\n') // a blank line after it
			default:
				in = append(in, '\n')
			}
		}
		if len(in) > 0 && rng.Intn(3) == 0 {
			in = in[:len(in)-1] // no final line end
		}
		var res [2][]batch
		for k := range res {
			var r io.Reader = bytes.NewReader(in)
			if iter%2 == 1 {
				r = iotest.OneByteReader(r)
			}
			src, err := NewCSVSource(r, "p.csv", 0, opts)
			if err != nil {
				t.Fatal(err)
			}
			src.noPlainLines = k == 1
			for {
				b, err := src.Next(context.Background())
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				// Copies that are nil when empty: an empty batch's Data may be nil or not.
				res[k] = append(res[k], batch{b.NumRows, b.NumCols, b.FirstRow, append([]byte(nil), b.Data...), append([]byte(nil), b.RawData...),
					slices.Clone(b.Ends), slices.Clone(b.RawEnds), slices.Clone(b.Nulls), slices.Clone(b.Lines), b.Bad})
				plainSeen += b.NumRows
			}
		}
		if !reflect.DeepEqual(res[0], res[1]) {
			t.Fatalf("input %q (sep %q options %+v):\nplainLines %+v\nparseRecord %+v", in, sep, opts, res[0], res[1])
		}
	}
	if plainSeen < 10000 {
		t.Fatalf("only %d rows read: the inputs hardly reach plainLines", plainSeen)
	}
}

// TestCSVQuotedAfterCleanPrefixMatchesWhole parses random inputs full of quotes, escapes, separators,
// NULL markers and line breaks (in quotes and out) twice: splitting the quote-free start of each record
// a word at a time before parseQuoted takes over (parseQuotedAfter), and with parseQuoted taking every
// such record whole. Rows, fields, NULLs, raw text, line numbers and bad rows must agree, with big reads
// and with one-byte reads (records cut anywhere).
func TestCSVQuotedAfterCleanPrefixMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for iter := 0; iter < 3000; iter++ {
		sep := []byte{',', '|', '\t'}[rng.Intn(3)]
		quote := []byte{'"', '\''}[rng.Intn(2)]
		opts := SourceOptions{Separator: sep, Quote: quote, Null: []string{"", `\N`}[rng.Intn(2)], BatchRows: 1 + rng.Intn(4)}
		if rng.Intn(3) == 0 {
			opts.Escape = '\\'
		}
		alphabet := []byte{'a', 'b', ' ', '\\', 'N', '\r', sep, sep, quote, '\n', 'x'}
		in := make([]byte, rng.Intn(200))
		for i := range in {
			in[i] = alphabet[rng.Intn(len(alphabet))]
		}
		var res [2]csvTestResult
		for k := range res {
			var r io.Reader = bytes.NewReader(in)
			if iter%2 == 1 {
				r = iotest.OneByteReader(r)
			}
			src, err := NewCSVSource(r, "q.csv", 0, opts)
			if err != nil {
				t.Fatal(err)
			}
			src.wholeQuoted = k == 1
			res[k] = csvReadAll(t, src)
		}
		if !reflect.DeepEqual(res[0], res[1]) {
			t.Fatalf("input %q (sep %q quote %q escape %q null %q):\nsplit %+v\nwhole %+v", in, sep, quote, opts.Escape, opts.Null, res[0], res[1])
		}
	}
}
