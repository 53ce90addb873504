package hfilewriter

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// sameFileAsReference writes text with WriteSortedCellText and checks the result against the HFile the
// old reader's cells give (readCellTextReference, then WriteCells): the same bytes, or
// ErrNotSortedText with the text untouched wherever the old path sorted or failed. It reports whether
// the text was written.
func sameFileAsReference(t *testing.T, text string, labels map[string]int, opts WriterOptions) bool {
	t.Helper()
	data := []byte(text)
	var got bytes.Buffer
	_, err := WriteSortedCellText(&got, data, labels, opts)
	if string(data) != text {
		t.Fatalf("input %q: changed by WriteSortedCellText", text)
	}
	cells, rerr := readCellTextReference(strings.NewReader(text), labels)
	var want bytes.Buffer
	if rerr == nil {
		_, rerr = WriteCells(&want, cells, opts)
	}
	// Written only where the old path wrote the cells in the text's own order.
	sorted := rerr == nil && isInputOrder(text, labels)
	switch {
	case errors.Is(err, ErrNotSortedText):
		if sorted {
			t.Fatalf("input %q: ErrNotSortedText, but the old path wrote it from the text's own order", text)
		}
		return false
	case err != nil:
		t.Fatalf("input %q: %v", text, err)
	case !sorted:
		t.Fatalf("input %q: written, but the old path gave %v (or sorted it)", text, rerr)
	case !bytes.Equal(got.Bytes(), want.Bytes()):
		t.Fatalf("input %q: %d bytes, the old path %d, not the same", text, got.Len(), want.Len())
	}
	return true
}

// isInputOrder: every line of text parses (kv.ParseCellLineLabels, blank lines skipped) and the cells
// are in strictly ascending key order, line by line.
func isInputOrder(text string, labels map[string]int) bool {
	var prev *Cell
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimRight(l, "\r") == "" {
			continue
		}
		c, err := kv.ParseCellLineLabels(strings.TrimSuffix(l, "\r"), labels)
		if err != nil || (prev != nil && compareCells(prev, &c) >= 0) {
			return false
		}
		prev = &c
	}
	return true
}

// TestWriteSortedCellTextSameBytes (issue 23 item 13): sorted text is written as the old path
// (reference reader, WriteCells) writes it, byte for byte, over many segments and goroutines; any other
// text is refused with ErrNotSortedText and left as it was, for ParseCellText to sort or report.
func TestWriteSortedCellTextSameBytes(t *testing.T) {
	labels := map[string]int{"secret": 1, "public": 2}
	v3 := DefaultWriterOptions()
	v3.CreateTime = 1
	v2 := v3
	v2.FormatVersion = 2
	for _, text := range []string{
		"",
		"\n\n\r\n",
		"a\tf:q\t1\tPut\tv\n",
		"a\tf:q\t1\tPut\tv", // no final newline
		"a\tf:q\t2\tDelete\t\r\nb\tf:q\t1\tPut\tv\r\n",
		"\\x00\\xFFr\\x5c\tf\\x3Aq:x\\x09y\t-5\tDeleteFamilyVersion\t\\x0A\\x0d\n",
		"r\tf:\t1\tPut\tv\nr\tf:a\t2\tPut\tv\nr\tf:a\t2\tDeleteColumn\tv\nr\tf:a\t1\tPut\tv\n",
		"r\tf:q\t1\tPut\tv\tvisibility=secret|public,ttl=1000\ns\tf:q\t1\tPut\tv\t\n",
		// not written: unsorted, duplicate, two families, parse errors
		"b\tf:q\t1\tPut\tv\na\tf:q\t1\tPut\tv\n",
		"a\tf:q\t1\tPut\tv\na\tf:q\t1\tPut\tw\n",
		"a\tf:q\t1\tPut\tv\nb\tg:q\t1\tPut\tv\n",
		"a\tf:q\t1\tPut\n",
		"a\tf:q\t1\tPut\tv\nb\tf:q\t1\tPut\t\\x4\n",
		"a\tf:q\t1\tPut\tv\tvisibility=unknown\n",
	} {
		sameFileAsReference(t, text, labels, v3)
	}
	if sameFileAsReference(t, "r\tf:q\t1\tPut\tv\tttl=5\n", labels, v2) {
		t.Error("tags in a v2 file: written")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	big := genCellText(60_000, false, 5) // ~3 MB: a dozen segments, three goroutines, a window of them
	if !sameFileAsReference(t, big, nil, v3) {
		t.Fatal("sorted text of many segments: not written")
	}
	i := strings.LastIndex(big[:len(big)-1], "\n")
	for _, text := range []string{big + big[:200], big[:i+1] + "bad line\n", genCellText(60_000, true, 5)} {
		if sameFileAsReference(t, text, nil, v3) {
			t.Fatal("duplicate in the last segment, error in the last line, or shuffled: written")
		}
	}
	runtime.GOMAXPROCS(1)
	if !sameFileAsReference(t, big, nil, v3) {
		t.Fatal("one goroutine: not written")
	}
}

// FuzzWriteSortedCellText: whatever the text, WriteSortedCellText writes what the old path writes or
// leaves it to that path.
func FuzzWriteSortedCellText(f *testing.F) {
	f.Add("a\tf:q\t1\tPut\tv\nb\tf:q\t2\tDelete\t\\x00\n")
	f.Add("\\x00\tf\\x3A:q\t-1\tDeleteFamily\t\r\n\r\nb\tf:q\t1\tPut\tv\tttl=5\n")
	opts := DefaultWriterOptions()
	opts.CreateTime = 1
	f.Fuzz(func(t *testing.T, text string) {
		sameFileAsReference(t, text, map[string]int{"a": 1}, opts)
	})
}

// TestParseCellTextRadixEdges: the radix sort of the shuffled path on rows that share long prefixes,
// differ only past 16 bytes, end in zero bytes or are prefixes of each other, with several columns,
// timestamps and types per row: the same cells and order as the old reader's stable sort.
func TestParseCellTextRadixEdges(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	alphabet := []string{"a", "b", `\x00`, `\xFF`}
	var b strings.Builder
	seen := map[string]bool{}
	for len(seen) < 5000 {
		n := rng.Intn(20)
		row := strings.Repeat("p", rng.Intn(3)*8) // common prefixes of 0, 8 and 16 bytes
		for i := 0; i < n; i++ {
			row += alphabet[rng.Intn(len(alphabet))]
		}
		if row == "" {
			continue
		}
		line := fmt.Sprintf("%s\tf:%s\t%d\t%s\tv", row, []string{"", "a", "b"}[rng.Intn(3)], rng.Intn(3),
			[]string{"Put", "Delete", "DeleteColumn"}[rng.Intn(3)])
		key := line[:strings.LastIndex(line, "\t")]
		if !seen[key] {
			seen[key] = true
			b.WriteString(line + "\n")
		}
	}
	sameAsReference(t, b.String(), nil)
	sameAsReference(t, b.String()+b.String()[:strings.Index(b.String(), "\n")+1], nil) // one duplicate
}
