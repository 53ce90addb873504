package jobs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// referenceMarshal is the manifest encoding Marshal must reproduce byte for byte: encoding/json,
// indented by two spaces, without HTML escaping.
func referenceMarshal(t *testing.T, m *Manifest) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestManifestMarshalIsEncodingJSON(t *testing.T) {
	strs := []string{"", "d", `a"b`, `\x00\xFF`, `back\slash`, "<&>", "tab\there", "nl\nx", "\x01\x1f\x7f",
		"caf\u00e9", "\u2028\u2029", "bad\xffutf8", "\xc3", "emoji \U0001F600", "ctl\b\f\r", "ns:t/x y", `}{],"files": null`}
	rng := rand.New(rand.NewSource(1))
	pick := func() string {
		if rng.Intn(3) == 0 {
			b := make([]byte, rng.Intn(12))
			for i := range b {
				b[i] = byte(rng.Intn(256))
			}
			return string(b)
		}
		return strs[rng.Intn(len(strs))]
	}
	base := Manifest{ManifestVersion: ManifestVersion, Tool: "hfload", ToolVersion: "0.1", RunID: "r", Table: "ns:t",
		Started: time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC), Finished: time.Date(2026, 11, 22, 5, 1, 0, 0, time.UTC),
		Settings: map[string]any{"files": nil, "z": 1, "a": `"files": null`},
		Inputs:   []InputFile{{Path: "/d/a.csv", Size: 3, MTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}},
		Counts:   Counts{RowsRead: 1, FilesWritten: 2}, Watermark: &Watermark{Column: "ts", Type: "number", Value: "42"}}
	base.SetCommands("/out")
	cases := map[string][]OutputFile{"nil": nil, "empty": {}}
	for n := 1; n <= 40; n++ {
		files := make([]OutputFile, n%7+1)
		for i := range files {
			files[i] = OutputFile{Family: pick(), Path: pick(), Region: rng.Intn(20000) - 10, RegionStart: pick(),
				RegionEnd: pick(), FirstKey: pick(), LastKey: pick(), Cells: rng.Int63() - rng.Int63(), Bytes: rng.Int63n(1 << 40)}
		}
		cases[fmt.Sprint("random-", n)] = files
	}
	many := make([]OutputFile, 1000) // pieces of many batches
	for i := range many {
		many[i] = OutputFile{Family: "d", Path: fmt.Sprintf("d/%032x", i), Region: i, RegionStart: pick(), RegionEnd: pick(),
			FirstKey: pick(), LastKey: pick(), Cells: int64(i), Bytes: int64(3 * i)}
	}
	cases["many"] = many
	for name, files := range cases {
		m := base
		m.Files = files
		if name == "random-3" {
			m.Watermark, m.Settings, m.Job = nil, nil, "nightly"
		}
		got, err := m.Marshal()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := referenceMarshal(t, &m); !bytes.Equal(got, want) {
			t.Errorf("%s: Marshal differs from encoding/json:\n%s\nwant\n%s", name, got, want)
		}
		for _, piece := range []int{1, 100, 4096, manifestPiece} { // the commit's pieces: Marshal's text, cut
			var w piecesWriter
			if err := m.writeText(&w, piece); err != nil {
				t.Fatalf("%s: pieces of %d: %v", name, piece, err)
			}
			if joined := bytes.Join(w.pieces, nil); !bytes.Equal(joined, got) {
				t.Errorf("%s: pieces of %d joined differ from Marshal:\n%s\nwant\n%s", name, piece, joined, got)
			}
			// Every piece but the last holds at least piece bytes, and less than what one batch of files
			// adds past that (and the text around the list).
			before, after, err := m.textAround()
			if err != nil {
				t.Fatal(err)
			}
			limit := piece + manifestBatch*maxEntry(m.Files) + len(before) + len(after) + len("[\n  ]")
			for k, p := range w.pieces {
				if k < len(w.pieces)-1 && len(p) < piece || len(p) > limit {
					t.Errorf("%s: pieces of %d: piece %d of %d has %d bytes", name, piece, k, len(w.pieces), len(p))
				}
			}
			if n := len(m.Files); piece == 1 && n > 0 && len(w.pieces) != 1+(n+manifestBatch-1)/manifestBatch {
				t.Errorf("%s: pieces of 1 byte: %d written for %d files", name, len(w.pieces), n)
			}
		}
		if files != nil && m.Files == nil {
			t.Fatalf("%s: Marshal changed the manifest", name)
		}
	}
}

// piecesWriter keeps a copy of each Write's bytes.
type piecesWriter struct{ pieces [][]byte }

func (w *piecesWriter) Write(p []byte) (int, error) {
	w.pieces = append(w.pieces, bytes.Clone(p))
	return len(p), nil
}

// maxEntry is the longest Marshal entry of one of files.
func maxEntry(files []OutputFile) int {
	n := 0
	for i := range files {
		b, _ := appendFileEntries(nil, files[i:i+1], true)
		n = max(n, len(b))
	}
	return n
}

// BenchmarkManifestMarshal: a manifest of 10,000 files (a table of 10,000 regions).
func BenchmarkManifestMarshal(b *testing.B) {
	m := &Manifest{ManifestVersion: ManifestVersion, Tool: "hfload", Table: "t", Files: make([]OutputFile, 10000)}
	for i := range m.Files {
		m.Files[i] = OutputFile{Family: "d", Path: fmt.Sprintf("d/%032x", i), Region: i, RegionStart: fmt.Sprintf("C%06d-%010d", i, i),
			RegionEnd: fmt.Sprintf("C%06d-%010d", i+1, i), FirstKey: fmt.Sprintf("C%06d-%010d", i, i+3),
			LastKey: fmt.Sprintf("C%06d-%010d", i, i+9), Cells: 50, Bytes: 3000}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

// appendJSONString writes what encoding/json writes for every byte value at every position of
// strings of several lengths: the eight-byte checks (and the overlapping last word) must send each
// byte that needs escaping, or that is not ASCII, to the byte loop.
func TestAppendJSONStringEveryByte(t *testing.T) {
	for n := 0; n <= 20; n++ {
		base := bytes.Repeat([]byte("k"), n)
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				s := bytes.Clone(base)
				s[pos] = byte(c)
				got, err := appendJSONString([]byte("pre"), string(s))
				if err != nil {
					t.Fatal(err)
				}
				want, err := appendJSONStringSlow([]byte("pre"), string(s))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
				}
			}
		}
	}
}
