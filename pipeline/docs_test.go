package pipeline

import (
	"bytes"
	"crypto/md5"
	"os"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
	"gopkg.in/yaml.v3"
)

// docExamples returns the complete YAML mappings (those with a rowkey) of docs/mapping.md, in order.
func docExamples(t *testing.T) []*Mapping {
	t.Helper()
	doc, err := os.ReadFile("../docs/mapping.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []*Mapping
	rest := string(doc)
	for {
		i := strings.Index(rest, "```yaml\n")
		if i < 0 {
			break
		}
		rest = rest[i+len("```yaml\n"):]
		j := strings.Index(rest, "```")
		block := rest[:j]
		rest = rest[j+3:]
		if !strings.Contains(block, "rowkey:") {
			continue
		}
		var cfg MappingConfig
		if err := yaml.Unmarshal([]byte(block), &cfg); err != nil {
			t.Fatalf("docs example:\n%s\nyaml: %v", block, err)
		}
		m, err := Compile(&cfg)
		if err != nil {
			t.Fatalf("docs example:\n%s\ncompile: %v", block, err)
		}
		out = append(out, m)
	}
	return out
}

func mapRows(t *testing.T, m *Mapping, header []string, rows [][]string) []kv.Cell {
	t.Helper()
	var cb CellBatch
	mp := m.NewMapper()
	mp.JobTimestamp = 5
	if err := mp.MapBatch(textBatch("doc.csv", 0, 0, rows), header, &cb, NewRejectSink(nil, 0)); err != nil {
		t.Fatal(err)
	}
	var cells []kv.Cell
	buf, refs := batchKeyValues(t, &cb)
	for _, r := range refs {
		rec := buf[r.Off : r.Off+r.Len]
		cells = append(cells, kv.CellFromKey(kv.KVKey(rec), kv.KVValue(rec)))
	}
	return cells
}

// TestDocExamples compiles every mapping in docs/mapping.md and checks the four seed examples' keys.
func TestDocExamples(t *testing.T) {
	ms := docExamples(t)
	if len(ms) != 5 {
		t.Fatalf("%d complete examples in docs/mapping.md, want 5", len(ms))
	}
	// Section 2 example.
	cells := mapRows(t, ms[0], []string{"host", "ts", "bytes", "agent", "status"},
		[][]string{{"web1", "2024-03-01 12:00:00", "512", NUL, NUL}})
	// Cells come in HBase order within the row: agent, bytes, status.
	if len(cells) != 3 || cells[0].Timestamp != 1709290800000 || string(cells[0].Qualifier) != "agent" || len(cells[0].Value) != 0 ||
		string(cells[2].Qualifier) != "status" || !bytes.Equal(cells[2].Value, []byte{0, 0}) {
		t.Fatalf("section 2: %v", cells)
	}

	// Log data.
	cells = mapRows(t, ms[1], []string{"host", "event", "ts", "message", "bytes"},
		[][]string{{"web1", "login", "2024-03-01 11:00:00", "ok", "7"}})
	prefix := []byte("web1|login|")
	if len(cells) != 2 || !bytes.HasPrefix(cells[0].Row, prefix) || len(cells[0].Row) != len(prefix)+8 ||
		!bytes.Equal(cells[0].Row[len(prefix):], []byte{0x7F, 0xFF, 0xFE, 0x72, 0x06, 0x54, 0x3C, 0x7F}) {
		t.Fatalf("log example: %v", cells) // MaxInt64 - 1709290800000 (computed with Python)
	}

	// Customer / order.
	cells = mapRows(t, ms[2], []string{"customer_id", "order_id", "total", "status"}, [][]string{{"c42", "-3", "9.90", "new"}})
	sum := md5.Sum([]byte("c42"))
	want := append(append([]byte{}, sum[:4]...), 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFD)
	if len(cells) != 2 || !bytes.Equal(cells[0].Row, want) || cells[0].Timestamp != 5 {
		t.Fatalf("customer example: %v", cells)
	}

	// Salted monotonic ids: consecutive ids spread over buckets.
	var rows [][]string
	for i := 0; i < 64; i++ {
		rows = append(rows, []string{itoa(1000 + i), "x"})
	}
	cells = mapRows(t, ms[3], []string{"id", "payload"}, rows)
	buckets := map[byte]bool{}
	for _, c := range cells {
		if c.Row[0] >= 16 || c.Row[0] != SaltByte(c.Row[1:], 16) || len(c.Row) != 9 {
			t.Fatalf("salted row %x", c.Row)
		}
		buckets[c.Row[0]] = true
	}
	if len(buckets) < 8 {
		t.Fatalf("64 consecutive ids hit only %d of 16 buckets", len(buckets))
	}

	// OpenTSDB: two samples of one hour share the row; qualifiers are the offsets.
	cells = mapRows(t, ms[4], []string{"metric", "host", "ts", "value"},
		[][]string{{"sys.cpu", "h1", "1700000000", "0.5"}, {"sys.cpu", "h1", "1700000100", "0.7"}})
	// 1700000000 s: hour bucket 1699999200 = 0x6553EDE0, offset 800 = 0x0320 (Python).
	wantRow := append([]byte("sys.cpu"), 0x65, 0x53, 0xED, 0xE0, 'h', '1')
	if len(cells) != 2 || !bytes.Equal(cells[0].Row, wantRow) || !bytes.Equal(cells[1].Row, wantRow) ||
		!bytes.Equal(cells[0].Qualifier, []byte{0x03, 0x20}) || !bytes.Equal(cells[1].Qualifier, []byte{0x03, 0x84}) {
		t.Fatalf("opentsdb example: %v", cells)
	}
}
