package hfilewriter

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// goldenCell is one expected cell of a golden listing; HasSeq is false when the listing has no mvcc.
type goldenCell struct {
	Cell   Cell
	HasSeq bool
}

// readGoldenListing parses a hbase-1.0.0 <name>.cells.txt sidecar (see that folder's README).
func readGoldenListing(t *testing.T, path string) (settings map[string]string, cells []goldenCell) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	settings = map[string]string{}
	want := -1
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatalf("%s: bad hex %q: %v", path, s, err)
		}
		return b
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(line, "# "), ": "); ok {
				settings[k] = v
			}
			continue
		}
		if n, ok := strings.CutPrefix(line, "cells: "); ok {
			if want, err = strconv.Atoi(n); err != nil {
				t.Fatal(err)
			}
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 8 {
			t.Fatalf("%s: line %q has %d fields", path, line, len(f))
		}
		var c Cell
		c.Row, c.Family, c.Qualifier = unhex(f[0]), unhex(f[1]), unhex(f[2])
		if c.Timestamp, err = strconv.ParseInt(f[3], 10, 64); err != nil {
			t.Fatal(err)
		}
		if c.Type, err = kv.ParseType(f[4]); err != nil {
			t.Fatal(err)
		}
		c.Value = unhex(f[5])
		if c.SeqID, err = strconv.ParseUint(f[6], 10, 64); err != nil {
			t.Fatal(err)
		}
		if f[7] != "" {
			for _, tg := range strings.Split(f[7], ",") {
				ty, val, ok := strings.Cut(tg, ":")
				if !ok {
					t.Fatalf("bad tag %q", tg)
				}
				n, err := strconv.Atoi(ty)
				if err != nil {
					t.Fatal(err)
				}
				v := unhex(val)
				c.Tags = binary.BigEndian.AppendUint16(c.Tags, uint16(1+len(v)))
				c.Tags = append(c.Tags, byte(n))
				c.Tags = append(c.Tags, v...)
			}
		}
		cells = append(cells, goldenCell{Cell: c, HasSeq: true})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if want != len(cells) {
		t.Fatalf("%s: header says %d cells, listed %d", path, want, len(cells))
	}
	return settings, cells
}

func goldenCellString(c *Cell) string {
	return fmt.Sprintf("%s tags=%x", c.String(), c.Tags)
}

// readAllCells reads every cell with the iterator, copying them.
func readAllCells(t *testing.T, r *Reader) []Cell {
	t.Helper()
	var out []Cell
	it := r.Iter()
	for it.Next() {
		out = append(out, *it.Cell())
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iterating: %v", err)
	}
	return out
}

// compareGoldenCells checks got against want field by field and reports the first difference.
func compareGoldenCells(t *testing.T, got []Cell, want []goldenCell) {
	t.Helper()
	for i := 0; i < len(got) && i < len(want); i++ {
		g, w := &got[i], &want[i].Cell
		same := bytes.Equal(g.Row, w.Row) && bytes.Equal(g.Family, w.Family) && bytes.Equal(g.Qualifier, w.Qualifier) &&
			g.Timestamp == w.Timestamp && g.Type == w.Type && bytes.Equal(g.Value, w.Value) &&
			bytes.Equal(g.Tags, w.Tags) && (!want[i].HasSeq || g.SeqID == w.SeqID)
		if !same {
			t.Fatalf("cell %d:\n got  %s value=%x\n want %s value=%x", i, goldenCellString(g), g.Value, goldenCellString(w), w.Value)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d cells, want %d", len(got), len(want))
	}
}

// checkBlooms requires every cell to pass the general bloom and absent keys to fail often enough.
func checkBlooms(t *testing.T, r *Reader, cells []Cell) {
	t.Helper()
	if r.BloomType() == BloomNone {
		ok, err := r.MayContain([]byte("anything"), nil)
		if err != nil || !ok {
			t.Fatalf("MayContain without bloom = %v, %v; want true", ok, err)
		}
		return
	}
	for i := range cells {
		c := &cells[i]
		ok, err := r.MayContain(c.Row, c.Qualifier)
		if err != nil {
			t.Fatalf("MayContain(%s): %v", c, err)
		}
		if !ok {
			t.Fatalf("cell %d %s fails the %s bloom", i, c, r.BloomType())
		}
	}
	absent, negatives := 0, 0
	for i := 0; i < 200; i++ {
		row := []byte(fmt.Sprintf("absent-row-%05d", i))
		ok, err := r.MayContain(row, []byte("q"))
		if err != nil {
			t.Fatal(err)
		}
		absent++
		if !ok {
			negatives++
		}
	}
	// Rows of the form absent-row-* sort after most data rows; mix in rows inside the key range too.
	if len(cells) > 0 {
		for i := 0; i < 200; i++ {
			row := append(append([]byte{}, cells[len(cells)/2].Row...), []byte(fmt.Sprintf("~x%d", i))...)
			ok, err := r.MayContain(row, []byte("zz-absent"))
			if err != nil {
				t.Fatal(err)
			}
			absent++
			if !ok {
				negatives++
			}
		}
	}
	if negatives*10 < absent*8 {
		t.Fatalf("bloom says %d of %d absent keys may be present; want at least 80%% rejected", absent-negatives, absent)
	}
}

func TestGoldenHBase100(t *testing.T) {
	files, err := filepath.Glob("testdata/hbase-1.0.0/*.hfile")
	if err != nil || len(files) != 22 {
		t.Fatalf("want 22 golden files, got %d (%v)", len(files), err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".hfile")
		t.Run(name, func(t *testing.T) {
			settings, want := readGoldenListing(t, strings.TrimSuffix(path, ".hfile")+".cells.txt")
			r, closer, err := OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer closer.Close()
			if got := fmt.Sprint(r.Trailer().MajorVersion); got != settings["hfile_version"] {
				t.Errorf("major version %s, listing says %s", got, settings["hfile_version"])
			}
			if got := r.EntryCount(); got != uint64(len(want)) {
				t.Errorf("trailer entry count %d, want %d", got, len(want))
			}
			got := readAllCells(t, r)
			compareGoldenCells(t, got, want)
			if err := r.Verify(); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			checkBlooms(t, r, got)
			if len(got) > 0 {
				if !bytes.Equal(r.FirstKey(), got[0].Key()) {
					t.Errorf("FirstKey %s, want %s", Key(r.FirstKey()), Key(got[0].Key()))
				}
				if !bytes.Equal(r.LastKey(), got[len(got)-1].Key()) {
					t.Errorf("LastKey %s, want %s", Key(r.LastKey()), Key(got[len(got)-1].Key()))
				}
			}
		})
	}
}

func TestGoldenHBase264(t *testing.T) {
	gen := func(n int, width int) []goldenCell {
		var out []goldenCell
		for i := 0; i < n; i++ {
			out = append(out, goldenCell{Cell: Cell{
				Row: []byte(fmt.Sprintf("row-%0*d", width, i)), Family: []byte("cf"), Qualifier: []byte("q"),
				Timestamp: 1700000000000, Type: kv.TypePut, Value: []byte(fmt.Sprintf("val-%0*d", width, i)),
			}, HasSeq: true})
		}
		return out
	}
	snap := readSnapshotListing(t, "testdata/hbase-2.6.4/snapshot-cells.txt")
	cases := map[string][]goldenCell{
		"simple-v3-none-rowbloom.hfile":           gen(10, 2),
		"seek-v3-none-rowbloom-256b-blocks.hfile": gen(100, 3),
		"snapshot-1.hfile":                        snap["snapshot-1.hfile"],
		"snapshot-2.hfile":                        snap["snapshot-2.hfile"],
		"snapshot-3.hfile":                        snap["snapshot-3.hfile"],
	}
	wantCounts := map[string]int{"snapshot-1.hfile": 4, "snapshot-2.hfile": 3, "snapshot-3.hfile": 1}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			if n, ok := wantCounts[name]; ok && len(want) != n {
				t.Fatalf("listing has %d cells for %s, README says %d", len(want), name, n)
			}
			r, closer, err := OpenFile(filepath.Join("testdata/hbase-2.6.4", name))
			if err != nil {
				t.Fatal(err)
			}
			defer closer.Close()
			tr := r.Trailer()
			if tr.MajorVersion != 3 || tr.MinorVersion != 3 || tr.ComparatorClassName != ComparatorKV {
				t.Errorf("trailer v%d.%d comparator %q", tr.MajorVersion, tr.MinorVersion, tr.ComparatorClassName)
			}
			got := readAllCells(t, r)
			compareGoldenCells(t, got, want)
			if err := r.Verify(); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if r.BloomType() != BloomRow {
				t.Errorf("bloom type %s, want ROW", r.BloomType())
			}
			checkBlooms(t, r, got)
		})
	}
}

// readSnapshotListing parses snapshot-cells.txt: "# <file>" headers, then
// "  row/family:qualifier/timestamp/Type = value" lines. Sequence ids are not listed.
func readSnapshotListing(t *testing.T, path string) map[string][]goldenCell {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]goldenCell{}
	cur := ""
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if name, ok := strings.CutPrefix(line, "# "); ok {
			cur = strings.TrimSpace(name)
			continue
		}
		rec, val, ok := strings.Cut(strings.TrimSpace(line), " = ")
		if !ok {
			t.Fatalf("bad listing line %q", line)
		}
		p := strings.Split(rec, "/")
		if len(p) != 4 {
			t.Fatalf("bad key %q", rec)
		}
		fam, qual, _ := strings.Cut(p[1], ":")
		ts, err := strconv.ParseInt(p[2], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		typ, err := kv.ParseType(p[3])
		if err != nil {
			t.Fatal(err)
		}
		out[cur] = append(out[cur], goldenCell{Cell: Cell{Row: []byte(p[0]), Family: []byte(fam), Qualifier: []byte(qual),
			Timestamp: ts, Type: typ, Value: []byte(val)}})
	}
	return out
}
