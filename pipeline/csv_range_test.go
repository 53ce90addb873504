package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rangeRows reads src to the end and returns one line per good row ("line L row R: fields") and per
// bad row ("line L bad: reason"), with rowBase and lineBase added, in line order.
func rangeRows(t *testing.T, src *CSVSource, rowBase, lineBase int64) []string {
	t.Helper()
	var out []string
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			slices.Sort(out) // a batch lists its bad rows apart
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, br := range b.Bad {
			out = append(out, fmt.Sprintf("line %04d bad: %s %q", br.Line+lineBase, br.Reason, br.Raw))
		}
		for i := 0; i < b.NumRows; i++ {
			var f []string
			for c := 0; c < b.NumCols; c++ {
				v, null := b.Field(i, c)
				if null {
					f = append(f, "NULL")
				} else {
					f = append(f, string(v))
				}
			}
			out = append(out, fmt.Sprintf("line %04d row %d: %q %q", b.Lines[i]+lineBase, b.FirstRow+int64(i)+rowBase, f, b.Raw(i)))
		}
		b.Release()
	}
}

// TestCSVRangesReadWhatTheFileGives cuts files at every offset, alone and with a second cut close behind: whenever each range ends
// where the next starts (CSVSpan), the ranges together read exactly the rows, bad rows, row ordinals
// and line numbers of one reader over the whole file; files whose records hold no line break always
// join up; and a cut inside a quoted line break is caught by the spans not joining.
func TestCSVRangesReadWhatTheFileGives(t *testing.T) {
	files := map[string]struct {
		text     string
		opts     SourceOptions
		joinsAll bool // no record holds a line break: every cut is a record boundary
	}{
		"header":          {text: "\xEF\xBB\xBFk,v,w\nr1,a,b\r\nr2,,c\n\nr3,x\nr4,\"q,1\",z\nr5,\"bad\"x,1\nr6,7,8", opts: SourceOptions{Header: true}, joinsAll: true},
		"quoted newlines": {text: "a,1,2\nb,\"two\nlines\",3\nc,\"x\"\"\ny\",4\nd,5\ne,\"unterminated,6\nf,7,8\n", joinsAll: false},
		"guessed fields":  {text: "1,2\n3,4\n5\n6,7\n\n8,9\n", joinsAll: true},
		"single column":   {text: "a\n\nb\nc\n", joinsAll: true},
		"postgres text":   {text: "a\t1\\\n2\tx\nb\t3\tz\n", opts: SourceOptions{Dialect: DialectPostgresText}, joinsAll: false},
		"overlong":        {text: "a,1\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbb,2\nc,3\n", opts: SourceOptions{MaxRecordBytes: 12}, joinsAll: true},
	}
	dir := t.TempDir()
	for name, f := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".csv")
			if err := os.WriteFile(path, []byte(f.text), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := f.opts
			opts.BatchRows = 2
			ins, err := ExpandInputs([]string{path}, opts)
			if err != nil {
				t.Fatal(err)
			}
			in := ins[0]
			if !in.Splittable() {
				t.Fatal("an uncompressed CSV file is not splittable")
			}
			whole, err := in.Open()
			if err != nil {
				t.Fatal(err)
			}
			ws := whole.(*CSVSource)
			want := rangeRows(t, ws, 0, 0)
			ws.Close()
			header, fields := ws.Header(), ws.Fields()
			size := int64(len(f.text))
			joined, caught := 0, 0
			for a := int64(1); a < size; a++ {
				for _, d := range []int64{0, 1, 2, 7} { // two or three ranges (d 0: [a, a) is empty)
					b := min(a+d, size)
					cuts := []int64{0, a, b, size}
					var got []string
					var rows, lines int64
					ok := true
					var prev CSVSpan
					for k := 0; k+1 < len(cuts); k++ {
						r, err := in.Range(CSVRange{From: cuts[k], To: cuts[k+1], Header: header, Fields: fields})
						if err != nil {
							t.Fatal(err)
						}
						src, err := r.Open()
						if err != nil {
							t.Fatal(err)
						}
						cs := src.(*CSVSource)
						got = append(got, rangeRows(t, cs, rows, lines)...) // ranges in line order
						cs.Close()
						sp := cs.Span()
						if k > 0 && sp.Start != prev.End {
							ok = false
						}
						prev = sp
						rows += sp.Rows
						lines += sp.Lines
					}
					if prev.End != size {
						t.Fatalf("cuts %v: the last range ends at %d of %d", cuts, prev.End, size)
					}
					if !ok {
						caught++
						if f.joinsAll {
							t.Fatalf("cuts %v: ranges do not join up, but no record holds a line break", cuts)
						}
						continue
					}
					joined++
					if !slices.Equal(got, want) {
						t.Fatalf("cuts %v:\n got %q\nwant %q", cuts, got, want)
					}
				}
			}
			if !f.joinsAll && caught == 0 {
				t.Fatal("no cut fell inside a record with a line break")
			}
			t.Logf("%d cuts joined up, %d caught", joined, caught)
		})
	}
}

func TestCSVRangeRefusesCompressed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.csv.gz")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ins, err := ExpandInputs([]string{path}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ins[0].Splittable() {
		t.Fatal("a .gz file is splittable")
	}
	if _, err := ins[0].Range(CSVRange{From: 0, To: 1}); err == nil {
		t.Fatal("Range of a .gz file: no error")
	}
}
