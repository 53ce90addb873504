package hfilewriter

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/kv"
)

// readCellTextReference is ReadCellTextLabels as it was before ParseCellText (a line scanner,
// kv.ParseCellLineLabels per line, a stable sort of an index over flat keys): the reference the new
// parser must agree with, cell for cell and error for error, and the baseline of its benchmark.
func readCellTextReference(r io.Reader, labels map[string]int) ([]Cell, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	var cells []Cell
	var lines []int
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimRight(line, "\r") == "" {
			continue
		}
		c, err := kv.ParseCellLineLabels(line, labels)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		cells = append(cells, c)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading cell text after line %d: %w", n, err)
	}
	keys := make([][]byte, len(cells))
	for i := range cells {
		keys[i] = cells[i].Key()
	}
	order := make([]int, len(cells))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return kv.CompareKeys(keys[order[a]], keys[order[b]]) < 0 })
	sorted := make([]Cell, len(cells))
	for i, j := range order {
		sorted[i] = cells[j]
		if i > 0 && kv.CompareKeys(keys[order[i-1]], keys[j]) == 0 {
			return nil, fmt.Errorf("lines %d and %d have the same key %s", lines[order[i-1]], lines[j], Key(keys[j]))
		}
	}
	return sorted, nil
}

// sameAsReference parses text with both readers and reports any difference in cells or errors.
func sameAsReference(t *testing.T, text string, labels map[string]int) {
	t.Helper()
	want, werr := readCellTextReference(strings.NewReader(text), labels)
	got, gerr := ParseCellText([]byte(text), labels)
	if fmt.Sprint(werr) != fmt.Sprint(gerr) {
		t.Fatalf("input %q:\nerror   %v\nwant    %v", text, gerr, werr)
	}
	if werr != nil {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("input %q: %d cells, want %d", text, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !bytes.Equal(g.Row, w.Row) || !bytes.Equal(g.Family, w.Family) || !bytes.Equal(g.Qualifier, w.Qualifier) ||
			g.Timestamp != w.Timestamp || g.Type != w.Type || !bytes.Equal(g.Value, w.Value) || !bytes.Equal(g.Tags, w.Tags) ||
			(g.Tags == nil) != (w.Tags == nil) {
			t.Fatalf("input %q: cell %d\n got %s tags %x\nwant %s tags %x", text, i, kv.FormatCellLine(&g), g.Tags, kv.FormatCellLine(&w), w.Tags)
		}
	}
}

// TestParseCellTextMatchesReference: valid and invalid inputs give what the old reader gave, cells
// and error messages (line numbers included).
func TestParseCellTextMatchesReference(t *testing.T) {
	labels := map[string]int{"secret": 1, "public": 2}
	for _, text := range []string{
		"",
		"\n\n\r\n",
		"a\tf:q\t1\tPut\tv\n",
		"a\tf:q\t1\tPut\tv", // no final newline
		"b\tf:q\t1\tPut\tv\r\na\tf:q\t2\tDelete\t\r\n",
		"a\tf:q\t1\tPut\tv\r\r\n",
		"\\x00\\xFFr\\x5c\tf\\x3Aq:x\\x09y\t-5\tDeleteFamilyVersion\t\\x0A\\x0d\n",
		"a\tf:q\t+7\tPut\tv\nb\tf:q\t9223372036854775807\tPut\tv\nc\tf:q\t-9223372036854775808\tPut\tv\n",
		"r\tf:\t1\tPut\tv\nr\tf:a\t1\tPut\tv\nr\tf:a\t2\tPut\tv\nr\tf:a\t2\tDeleteColumn\tv\nr\tg:a\t1\tDeleteFamily\t\n",
		"r\tf:q\t1\tPut\tv\tvisibility=secret|public,ttl=1000\ns\tf:q\t1\tPut\tv\t\n",
		// errors
		"a\tf:q\t1\tPut\n",
		"a\tf:q\t1\tPut\tv\tt\tx\n",
		"ok\tf:q\t1\tPut\tv\n\\x4\tf:q\t1\tPut\tv\n",
		"a\tf\\xZZ:q\t1\tPut\tv\n",
		"a\tfq\t1\tPut\tv\n",
		"a\tf\\x41q\t1\tPut\tv\n",
		"a\t:q\t1\tPut\tv\n",
		"a\t\\x3Aq\t1\tPut\tv\n",
		"a\tf:q\t1x\tPut\tv\n",
		"a\tf:q\t\tPut\tv\n",
		"a\tf:q\t99999999999999999999\tPut\tv\n",
		"a\tf:q\t1\tput\tv\n",
		"a\tf:q\t1\tMinimum\tv\n",
		"a\tf:q\t1\tPut\t\\x\n",
		"a\tf:q\t1\tPut\tv\tvisibility=unknown\n",
		"\tf:q\t1\tPut\tv\n",
		"a\tf:q\t1\tPut\tv\nb\tf:q\t1\tPut\tv\na\tf:q\t1\tPut\tw\n",
		"x\n\n\ny\n",
		// the sort's entries: long rows sharing 16 bytes, zero padding, families before qualifiers
		"abcdefghijklmnopqrt\tf:q\t1\tPut\tv\nabcdefghijklmnopqrs\tf:q\t1\tPut\tv\nabcdefghijklmnopq\tf:q\t1\tPut\tv\n" +
			"ab\\x00\tf:q\t1\tPut\tv\nab\tf:q\t1\tPut\tv\nab\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\tf:q\t1\tPut\tv\n" +
			"ab\tg:a\t1\tPut\tv\nab\tff:a\t1\tPut\tv\nab\tf:qq\t1\tPut\tv\nab\tf:q\t2\tPut\tv\nab\tf:q\t1\tDelete\tv\n" +
			"abcdefghijklmnopqrs\tf:q\t1\tDeleteColumn\tv\n",
	} {
		sameAsReference(t, text, labels)
	}
}

// genCellText returns n cell lines of export-like cells (some escaped bytes), in key order or
// shuffled.
func genCellText(n int, shuffled bool, seed int64) string {
	rng := rand.New(rand.NewSource(seed))
	quals := []string{"customer_id", "order_ts", "product_id", "quantity", "status", "unit_price"}
	lines := make([]string, 0, n)
	for i := 0; len(lines) < n; i++ {
		row := fmt.Sprintf("%08d", 1_000_000+i)
		if i%50 == 0 {
			row += `\x00\xFF`
		}
		for _, q := range quals {
			if len(lines) == n {
				break
			}
			v := fmt.Sprintf("value-%d-%s", rng.Intn(1_000_000), q)
			if rng.Intn(10) == 0 {
				v = `bin\x01\x02` + v
			}
			lines = append(lines, fmt.Sprintf("%s\td:%s\t1700000000000\tPut\t%s", row, q, v))
		}
	}
	if shuffled {
		rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestParseCellTextLargeMatchesReference: more than one chunk (goroutine) per input, sorted and
// shuffled, and an error in a later chunk reports its absolute line number.
func TestParseCellTextLargeMatchesReference(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, shuffled := range []bool{false, true} {
		sameAsReference(t, genCellText(60_000, shuffled, 1), nil)
	}
	text := genCellText(60_000, false, 2)
	i := strings.LastIndex(text[:len(text)-1], "\n")
	sameAsReference(t, text[:i+1]+"bad line\n", nil)
	sameAsReference(t, text+text[:200], nil) // duplicates across chunks
	runtime.GOMAXPROCS(3)                    // three sorted parts, merged pairwise
	sameAsReference(t, genCellText(200_000, true, 4), nil)
}

// FuzzParseCellText: whatever the input, the parser agrees with the reference reader.
func FuzzParseCellText(f *testing.F) {
	f.Add("a\tf:q\t1\tPut\tv\nb\tf:q\t2\tDelete\t\\x00\n")
	f.Add("\\x00\tf\\x3A:q\t-1\tDeleteFamily\t\r\n\r\nb\tf:q\t1\tPut\tv\tttl=5\n")
	f.Fuzz(func(t *testing.T, text string) {
		sameAsReference(t, text, map[string]int{"a": 1})
	})
}

// BenchmarkReadCellText (issue 23 item 13) parses 1,000,000 cell lines (~57 MB) with the old reader
// and with ParseCellText in the same run, sorted and shuffled, and reports ns per cell and the
// old/new speed-up (ref-ns/cell over ns/cell).
func BenchmarkReadCellText(b *testing.B) {
	for _, shuffled := range []bool{false, true} {
		text := []byte(genCellText(1_000_000, shuffled, 3))
		name := map[bool]string{false: "sorted", true: "shuffled"}[shuffled]
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, len(text))
			var refNs, newNs float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				copy(buf, text) // ParseCellText decodes in place
				b.StartTimer()
				t0 := time.Now().UnixNano()
				if _, err := ParseCellText(buf, nil); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now().UnixNano()
				if _, err := readCellTextReference(bytes.NewReader(text), nil); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now().UnixNano()
				newNs += float64(t1 - t0)
				refNs += float64(t2 - t1)
			}
			b.ReportMetric(newNs/float64(b.N)/1e6, "ns/cell")
			b.ReportMetric(refNs/float64(b.N)/1e6, "ref-ns/cell")
			b.ReportMetric(refNs/newNs, "speedup")
		})
	}
}
