package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzCSVParser checks, for arbitrary bytes and dialects, that the CSV source never panics or fails
// on in-memory input and that its output accounts for the whole input: every physical line belongs
// to exactly one good row, bad row or the header, or is a blank line; each row's raw text is exactly
// its lines; and on quote-free input the fields joined by the separator give back the raw text.
func FuzzCSVParser(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n"), byte(','), byte('"'), false, false, false, false, false)
	f.Add([]byte("h1|h2\r\n\"x|y\"|\"\"\r\n\"open|\n3|4"), byte('|'), byte('"'), true, false, true, false, false)
	f.Add([]byte("1\t\\N\n\n2\t\"a\"\"b\"c\n"), byte('\t'), byte('"'), false, true, false, false, false)
	f.Add([]byte("\xEF\xBB\xBF'a''b',c\n'multi\nline',d\n,\n"), byte(','), byte('\''), false, false, true, false, true)
	f.Add([]byte("1\ta\\\tb\t\\N\n2\tx\\\ny\t\"q\\\"\"\n3\\"), byte('\t'), byte('"'), false, true, false, true, false)
	f.Add([]byte("k,v,c\n1,\"a,b\",\"\"\n2,\"x \"\"y\"\" z\",\r\n\"3\",,\"two\nlines\"\n4,a\"b,\"c\"d\n"), byte(','), byte('"'), true, false, false, false, false)
	f.Fuzz(func(t *testing.T, data []byte, sep, quote byte, header, nullMarker, small, escape, trim bool) {
		opts := SourceOptions{Separator: sep, Quote: quote, Header: header, BatchRows: 3, TrimSpace: trim}
		if escape {
			opts.Escape = '\\'
		}
		if nullMarker {
			opts.Null = `\N`
		}
		if small {
			opts.MaxRecordBytes = 16
		}
		src, err := NewCSVSource(iotest.HalfReader(bytes.NewReader(data)), "fuzz.csv", 0, opts)
		if err != nil {
			if sep == 0 || quote == 0 || sep == '\n' || sep == '\r' || quote == '\n' || quote == '\r' || sep == quote || header ||
				escape && (sep == '\\' || quote == '\\') {
				return // invalid dialect, or a header that cannot be read
			}
			t.Fatalf("NewCSVSource: %v", err)
		}
		norm, _ := csvNormalized(opts, "fuzz.csv")
		text := data
		if bytes.HasPrefix(text, []byte("\xEF\xBB\xBF")) {
			text = text[3:]
		}
		// After a final line feed the last "line" is empty: it is blank, so it needs no owner, but
		// a record whose escaped line feed ends the input does reach it.
		lines := strings.Split(string(text), "\n")
		covered := make([]bool, len(lines))
		cover := func(line int64, raw string, truncated bool) {
			t.Helper()
			k := strings.Count(raw, "\n") + 1
			if line < 1 || int(line)-1+k > len(lines) {
				t.Fatalf("row at line %d spanning %d lines: input has %d lines", line, k, len(lines))
			}
			want := strings.Join(lines[line-1:int(line)-1+k], "\n")
			want = strings.TrimSuffix(want, "\r")
			if truncated {
				if !strings.HasPrefix(want, raw) {
					t.Fatalf("line %d: raw %q is not a prefix of %q", line, raw, want)
				}
			} else if raw != want {
				t.Fatalf("line %d: raw %q, want %q", line, raw, want)
			}
			for i := line - 1; i < line-1+int64(k); i++ {
				if covered[i] {
					t.Fatalf("line %d covered twice", i+1)
				}
				covered[i] = true
			}
		}
		var last int64
		var numCols int
		var summary strings.Builder
		for {
			b, err := src.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if b.NumRows > 0 {
				if numCols != 0 && b.NumCols != numCols {
					t.Fatalf("NumCols changed from %d to %d", numCols, b.NumCols)
				}
				numCols = b.NumCols
			}
			if len(b.Ends) != b.NumRows*b.NumCols || len(b.Nulls) != len(b.Ends) || len(b.Lines) != b.NumRows || len(b.RawEnds) != b.NumRows {
				t.Fatalf("batch shape mismatch")
			}
			csvFuzzSummarize(&summary, b)
			for i := 0; i < b.NumRows; i++ {
				if b.Lines[i] <= last {
					t.Fatalf("row lines not increasing: %d after %d", b.Lines[i], last)
				}
				last = b.Lines[i]
				raw := string(b.Raw(i))
				cover(b.Lines[i], raw, false)
				if !trim && bytes.IndexByte(data, norm.Quote) < 0 && (!escape || bytes.IndexByte(data, '\\') < 0) {
					var parts []string
					for j := 0; j < b.NumCols; j++ {
						fv, null := b.Field(i, j)
						if null {
							if len(fv) != 0 {
								t.Fatalf("NULL field with text")
							}
							if opts.Null != "" {
								fv = []byte(opts.Null)
							}
						}
						parts = append(parts, string(fv))
					}
					if got := strings.Join(parts, string([]byte{norm.Separator})); got != raw {
						t.Fatalf("line %d: fields %q do not rebuild raw %q", b.Lines[i], parts, raw)
					}
				}
			}
			for _, bad := range b.Bad {
				cover(bad.Line, string(bad.Raw), strings.HasPrefix(bad.Reason, "record longer"))
				if bad.Reason == "" {
					t.Fatalf("bad row without reason")
				}
			}
		}
		// Reading the input in one piece must give exactly the same rows as reading it in halves.
		whole, err := NewCSVSource(bytes.NewReader(data), "fuzz.csv", 0, opts)
		if err != nil {
			t.Fatalf("second open: %v", err)
		}
		if got := csvFuzzSummary(t, whole); got != summary.String() {
			t.Fatalf("chunking changes the result:\n%s\nvs\n%s", summary.String(), got)
		}
		// ... and so must reading every record through parseRecord, without plainLines' fast paths
		// (appendUnquotedLine, appendQuotedLine, plainShort's callers see the same batches).
		general, err := NewCSVSource(bytes.NewReader(data), "fuzz.csv", 0, opts)
		if err != nil {
			t.Fatalf("third open: %v", err)
		}
		general.noPlainLines = true
		if got := csvFuzzSummary(t, general); got != summary.String() {
			t.Fatalf("plainLines changes the result:\n%s\nvs parseRecord\n%s", summary.String(), got)
		}
		// Lines nobody claimed must be blank, or belong to the header (which precedes every row).
		firstClaimed := len(lines)
		for i, c := range covered {
			if c {
				firstClaimed = i
				break
			}
		}
		for i, c := range covered {
			if c || strings.TrimSuffix(lines[i], "\r") == "" || (header && i < firstClaimed) {
				continue
			}
			// A line skipped while discarding an overlong line is not claimed either.
			if small && len(lines[i]) > 0 {
				continue
			}
			t.Fatalf("line %d (%q) is not accounted for", i+1, lines[i])
		}
	})
}

// csvFuzzSummarize appends a batch's rows and bad rows to sb in a comparable text form (batch
// boundaries excluded: they depend on BatchRows only).
func csvFuzzSummarize(sb *strings.Builder, b *Batch) {
	for i := 0; i < b.NumRows; i++ {
		fmt.Fprintf(sb, "row %d %q:", b.Lines[i], b.Raw(i))
		for j := 0; j < b.NumCols; j++ {
			f, null := b.Field(i, j)
			fmt.Fprintf(sb, " %q/%v", f, null)
		}
		sb.WriteByte('\n')
	}
	for _, bad := range b.Bad {
		fmt.Fprintf(sb, "bad %d %s %q\n", bad.Line, bad.Reason, bad.Raw)
	}
}

func csvFuzzSummary(t *testing.T, src *CSVSource) string {
	var sb strings.Builder
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return sb.String()
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		csvFuzzSummarize(&sb, b)
	}
}
