package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// familiesYAML maps a row to four cells in three families ("a" < "ab" < "b": ranks 0, 1, 2), listed out
// of family order and with a qualifier built from data, so that a row gives several row records that
// overlap ([b:x], [a:<host>, ab:q], [a:zz]); each cell carries a TTL tag.
const familiesYAML = `
columns:
  - {name: id}
  - {name: host}
  - {name: v}
  - {name: w}
  - {name: ttl, type: long}
rowkey: [{column: id}]
cells:
  - {family: b, qualifier: x, value: v}
  - {family: a, qualifier: "${host}", value: w}
  - {family: ab, qualifier: q, value: v}
  - {family: a, qualifier: zz, value: w}
ttl: ttl
`

// literalYAML maps a row to one cell in each of three families, a's and c's qualifier built from data:
// literal cells (without tags), each its family's only cell of the row, which a family's writer must
// not gather as rows of one cell (collectNewRows: those are of the usual form), while b's are.
const literalYAML = `
columns:
  - {name: id}
  - {name: host}
  - {name: v}
  - {name: w}
  - {name: ttl}
rowkey: [{column: id}]
cells:
  - {family: a, qualifier: "${host}", value: v}
  - {family: b, qualifier: q, value: w}
  - {family: c, qualifier: "${host}", value: v}
`

// familiesSpec is a load of rows CSV rows (row keys repeat every `keys` rows: duplicates) with the
// mapping src (YAML) or columns (an ImportTsv spec).
func familiesSpec(t *testing.T, src, columns string, rows, keys, valueLen int) *Spec {
	t.Helper()
	var sb strings.Builder
	pad := strings.Repeat("p", valueLen)
	if src != "" {
		sb.WriteString("id,host,v,w,ttl\n")
	}
	for i := 0; i < rows; i++ {
		k := (i * 7919) % keys
		fmt.Fprintf(&sb, "r%05d,h%d,v%d%s,w%d,%d\n", k, i%3, i, pad, i%5, 1000+i%2)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs, err := pipeline.ExpandInputs([]string{in}, pipeline.SourceOptions{Header: src != ""})
	if err != nil {
		t.Fatal(err)
	}
	var cfg *pipeline.MappingConfig
	if src != "" {
		cfg = &pipeline.MappingConfig{}
		if err := yaml.Unmarshal([]byte(src), cfg); err != nil {
			t.Fatal(err)
		}
	} else if cfg, err = pipeline.ParseColumns(columns); err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Spec{Table: "t", Inputs: inputs, Mapping: m,
		Pipeline: pipeline.RunOptions{Timestamp: 1700000000000, Workers: 2},
		Splits:   partition.Splits{[]byte("r00100"), []byte("r00200")}, Memory: 64 << 20, TempDir: t.TempDir()}
}

// mixedBlooms gives family a a ROWCOL bloom, ab none and the others HBase's default (ROW).
func mixedBlooms(family string) hfilewriter.WriterOptions {
	o := hfilewriter.DefaultWriterOptions()
	switch family {
	case "a":
		o.Bloom = hfilewriter.BloomRowCol
	case "ab":
		o.Bloom = hfilewriter.BloomNone
	}
	return o
}

// smallBlooms gives every family ROW bloom chunks of 256 bytes (213 keys).
func smallBlooms(string) hfilewriter.WriterOptions {
	o := hfilewriter.DefaultWriterOptions()
	o.BloomBlockSize = 256
	return o
}

// TestRowRecordsSameFiles: sorting one record per row for all families (rowrecords.go) writes the
// same files, byte for byte, with the same results as sorting one record per (row, family), under
// every duplicates policy, a family-dependent combiner, tags, file rolling, given, many and computed
// splits, and spills.
func TestRowRecordsSameFiles(t *testing.T) {
	concat := func(dst []byte, h *cellrec.Header, q, a, b []byte) []byte {
		if string(h.Family) == "a" { // a family-dependent fold: the combiner sees the cell's own family
			return append(append(append(dst, a...), '|'), b...)
		}
		return append(dst, b...)
	}
	many := partition.Splits{}
	for k := 10; k < 400; k += 20 {
		many = append(many, []byte(fmt.Sprintf("r%05d", k)))
	}
	const unordered, ordered = "HBASE_ROW_KEY,b:v,a:v,ab:v,a:w", "HBASE_ROW_KEY,a:v,a:w,ab:v,b:v"
	const oneColumn = "HBASE_ROW_KEY,a:v,ab:v,b:v,c:v" // every family's file gets rows of one cell (appendNewRowCells)
	cases := []struct {
		name    string
		mod     func(*Spec)
		rows    int
		keys    int
		pad     int
		columns string // an ImportTsv spec; "": familiesYAML, or yaml
		yaml    string
		spills  bool
	}{
		{name: "keep", mod: func(s *Spec) { s.Duplicates = DuplicatesKeep }},
		{name: "first", mod: func(s *Spec) { s.Duplicates = DuplicatesFirst }},
		{name: "last", mod: func(s *Spec) { s.Duplicates = DuplicatesLast }},
		{name: "error", mod: func(s *Spec) {}},
		{name: "combine", mod: func(s *Spec) { s.Combine = concat }},
		{name: "combine-last", mod: func(s *Spec) { s.Combine, s.FoldSeqLast = concat, true }},
		{name: "roll", mod: func(s *Spec) { s.Duplicates, s.MaxFileSize = DuplicatesLast, 16<<10 }},
		{name: "many-splits", mod: func(s *Spec) { s.Duplicates, s.Splits = DuplicatesFirst, many }},
		{name: "split-sample", mod: func(s *Spec) { s.Duplicates, s.Splits, s.SplitSample = DuplicatesKeep, nil, 4 }},
		// An ImportTsv spec out of family order: several row records per row, as the YAML mapping.
		{name: "importtsv-last", mod: func(s *Spec) { s.Duplicates = DuplicatesLast }, columns: unordered},
		// In family order and without duplicate rows: one row record per row, whose views hold cells of
		// every family (the stream switches files within a view).
		{name: "one-per-row", mod: func(s *Spec) {}, columns: ordered, keys: 1200},
		{name: "one-per-row-roll", mod: func(s *Spec) { s.MaxFileSize = 8 << 10 }, columns: ordered, keys: 1200},
		{name: "one-per-row-last", mod: func(s *Spec) { s.Duplicates = DuplicatesLast }, columns: ordered},
		// Each family's bloom type its own (the stream hashes rows once for the ROW blooms only).
		{name: "mixed-blooms", mod: func(s *Spec) { s.Family = mixedBlooms }, columns: ordered, keys: 1200},
		// Bloom chunks of 213 keys: every region's family files share full chunks of the stream's bloom
		// (bloomshare.go), also when a file rolls, a family misses rows or duplicates are held (last).
		{name: "shared-blooms", mod: func(s *Spec) { s.Family = smallBlooms }, columns: ordered, keys: 1200},
		{name: "shared-blooms-roll", mod: func(s *Spec) { s.Family, s.MaxFileSize = smallBlooms, 40<<10 }, columns: ordered,
			keys: 1200},
		{name: "shared-blooms-yaml-last", mod: func(s *Spec) { s.Family, s.Duplicates = smallBlooms, DuplicatesLast },
			rows: 2400, keys: 1200},
		// One column per family: each family's rows of one cell go to its writer in runs.
		{name: "one-column", mod: func(s *Spec) {}, columns: oneColumn, keys: 1200},
		{name: "one-column-roll", mod: func(s *Spec) { s.MaxFileSize = 6 << 10 }, columns: oneColumn, keys: 1200},
		{name: "one-column-first", mod: func(s *Spec) { s.Duplicates = DuplicatesFirst }, columns: oneColumn},
		{name: "one-column-last", mod: func(s *Spec) { s.Duplicates = DuplicatesLast }, columns: oneColumn},
		{name: "shared-blooms-one-column", mod: func(s *Spec) { s.Family = smallBlooms }, columns: oneColumn, keys: 1200},
		{name: "shared-blooms-one-column-roll", mod: func(s *Spec) { s.Family, s.MaxFileSize = smallBlooms, 12<<10 },
			columns: oneColumn, keys: 1200},
		// Literal cells alone in their family, as long as a usual cell would be: not rows of one cell.
		{name: "literal-one-column", mod: func(s *Spec) {}, yaml: literalYAML, keys: 1200},
		{name: "literal-one-column-blooms", mod: func(s *Spec) { s.Family = smallBlooms }, yaml: literalYAML, keys: 1200},
		// With duplicate rows: a row's records differ in a's qualifier, so a view of several cells is
		// followed by one whose first cell (b's) duplicates its last.
		{name: "literal-one-column-first", mod: func(s *Spec) { s.Duplicates = DuplicatesFirst }, yaml: literalYAML},
		{name: "literal-one-column-last", mod: func(s *Spec) { s.Duplicates = DuplicatesLast }, yaml: literalYAML},
		// One region, and more workers than regions: a region's families are written in parallel.
		{name: "one-region-last", mod: func(s *Spec) { s.Duplicates, s.Splits = DuplicatesLast, nil }, columns: ordered},
		{name: "one-region-4-workers", mod: func(s *Spec) { s.Splits, s.Pipeline.Workers = nil, 4 }, columns: ordered,
			keys: 1200},
		{name: "spills", mod: func(s *Spec) { s.Duplicates, s.Memory = DuplicatesLast, 60<<20 },
			rows: 30000, keys: 20000, pad: 200, spills: true},
		{name: "spills-one-per-row", mod: func(s *Spec) { s.Memory = 60 << 20 }, columns: ordered,
			rows: 30000, keys: 30000, pad: 500, spills: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, keys := max(c.rows, 1200), max(c.keys, 400)
			load := func(familyRecords bool) (*Result, error, map[string][]byte) {
				var spec *Spec
				if c.yaml != "" {
					spec = familiesSpec(t, c.yaml, "", rows, keys, c.pad)
				} else if c.columns == "" {
					spec = familiesSpec(t, familiesYAML, "", rows, keys, c.pad)
				} else {
					spec = familiesSpec(t, "", c.columns, rows, keys, c.pad)
				}
				c.mod(spec)
				spec.familyRecords = familyRecords
				if !familyRecords && !useRowRecords(len(spec.Mapping.Families()), spec.workers(), &memSink{}, spec.sortBudget()) {
					t.Fatal("this load does not sort row records")
				}
				var sink memSink
				res, err := Load(context.Background(), spec, &sink)
				return res, err, sink.files
			}
			fres, ferr, ffiles := load(true)
			rres, rerr, rfiles := load(false)
			if (ferr == nil) != (rerr == nil) || ferr != nil && ferr.Error() != rerr.Error() && !errors.Is(rerr, ErrDuplicates) {
				t.Fatalf("errors: family records %v, row records %v", ferr, rerr)
			}
			if c.name == "error" && !errors.Is(rerr, ErrDuplicates) {
				t.Fatalf("policy error: %v", rerr)
			}
			if ferr != nil && !errors.Is(ferr, ErrDuplicates) {
				t.Fatal(ferr)
			}
			if len(ffiles) == 0 || len(ffiles) != len(rfiles) {
				t.Fatalf("%d files from family records, %d from row records", len(ffiles), len(rfiles))
			}
			for name, b := range ffiles {
				if !bytes.Equal(b, rfiles[name]) {
					t.Errorf("%s: %d bytes from family records, %d (other bytes) from row records", name, len(b), len(rfiles[name]))
				}
			}
			if !reflect.DeepEqual(fres.Files, rres.Files) || fres.Cells != rres.Cells || fres.Duplicates != rres.Duplicates ||
				fres.RowsWritten != rres.RowsWritten || !reflect.DeepEqual(fres.Splits, rres.Splits) {
				t.Errorf("results differ:\nfamily records %d cells, %d duplicates, %d rows, %d files\nrow records    %d cells, %d duplicates, %d rows, %d files",
					fres.Cells, fres.Duplicates, fres.RowsWritten, len(fres.Files), rres.Cells, rres.Duplicates, rres.RowsWritten, len(rres.Files))
			}
			if strings.HasPrefix(c.name, "shared-blooms") && !strings.Contains(c.name, "roll") {
				// Every row has a cell in every family and no file rolls: each family file takes every
				// full chunk (213 keys, one per row) from the shared bloom, held duplicates (last) or not.
				want := int64(0)
				for _, f := range rres.Files {
					want += f.Rows / 213
				}
				if want == 0 || rres.sharedBloomChunks != want {
					t.Errorf("%d bloom chunks shared, want %d (every full chunk of every family file)", rres.sharedBloomChunks, want)
				}
			}
			if c.spills && (fres.Spills == 0 || rres.Spills == 0) {
				t.Errorf("spills: family records %d, row records %d; want some", fres.Spills, rres.Spills)
			}
			if wantDups := keys < rows && c.mod != nil && !strings.HasPrefix(c.name, "combine"); wantDups != (fres.Duplicates > 0) {
				t.Errorf("%d duplicates met", fres.Duplicates)
			}
			t.Logf("%d files, %d cells, %d duplicates, spills %d (family records) / %d (row records)",
				len(rfiles), rres.Cells, rres.Duplicates, fres.Spills, rres.Spills)
		})
	}
}

// TestRowRecordsReserveEveryFamilysFile: a row-record task writes every family's file at once, and
// the buffers of all of them are reserved (they show in the accounted peak); when a buffering sink's
// files of every family and worker would take more than a quarter of the budget, Load sorts one record
// per (row, family) instead, one file per task.
func TestRowRecordsReserveEveryFamilysFile(t *testing.T) {
	for _, c := range []struct {
		fileMemory int64
		rows       bool
		most       int // files open at once, at most
	}{{1 << 20, true, 4}, {3 << 20, false, 1}} {
		spec := testSpec(t, uniqueCSV(3000)) // 3 regions, 2 families, a 16 MiB sort budget
		spec.Pipeline.Workers = 2
		sink := &bufferingSink{fileMemory: c.fileMemory}
		if got := useRowRecords(2, 2, sink, spec.sortBudget()); got != c.rows {
			t.Fatalf("file buffers of %d bytes: row records %v, want %v", c.fileMemory, got, c.rows)
		}
		res, err := Load(context.Background(), spec, sink)
		if err != nil {
			t.Fatal(err)
		}
		if len(sink.files) != 6 || sink.most > c.most || sink.most < 1 {
			t.Fatalf("file buffers of %d bytes: %d files, %d open at once (want at most %d)", c.fileMemory, len(sink.files), sink.most, c.most)
		}
		if res.PeakMemory < int64(c.most)*c.fileMemory {
			t.Fatalf("file buffers of %d bytes: accounted peak %d does not include the %d files'", c.fileMemory, res.PeakMemory, c.most)
		}
		t.Logf("file buffers of %d bytes: %d open at once, peak %d", c.fileMemory, sink.most, res.PeakMemory)
	}
}

// writeFailSink is memSink whose files fail to write past limit bytes.
type writeFailSink struct {
	memSink
	limit int
}

type writeFailFile struct {
	File
	n, limit int
}

func (s *writeFailSink) Create(ctx context.Context, family, name string, o FileOptions) (File, error) {
	f, err := s.memSink.Create(ctx, family, name, o)
	return &writeFailFile{File: f, limit: s.limit}, err
}

func (f *writeFailFile) Write(p []byte) (int, error) {
	if f.n += len(p); f.n > f.limit {
		return 0, errors.New("device full")
	}
	return f.File.Write(p)
}

// TestRowRecordsWriteError: a file that fails while the families are written in parallel fails the
// load with its error (no hang), and every file of the failed stream is aborted, none kept.
func TestRowRecordsWriteError(t *testing.T) {
	spec := familiesSpec(t, "", "HBASE_ROW_KEY,a:v,a:w,ab:v,b:v", 20000, 20000, 100)
	spec.Splits = nil
	sink := &writeFailSink{limit: 200 << 10}
	_, err := Load(context.Background(), spec, sink)
	if err == nil || !strings.Contains(err.Error(), "device full") {
		t.Fatalf("load: %v", err)
	}
	if len(sink.files) != 0 || len(sink.aborted) == 0 {
		t.Fatalf("%d files kept, %d aborted", len(sink.files), len(sink.aborted))
	}
}

// usualRanks gives, for every first byte of a cell, the family's rank of the usual cell it starts
// (cellrec.Dict.NextUsual decodes it; rd.Split gives the rank) and 0xff for every other byte.
func TestUsualRanks(t *testing.T) {
	fams := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	for _, n := range []int{7, 30} { // 21 codes, and 90: more than the 64 one-byte codes
		var quals [][]byte
		for i := 0; i < n; i++ {
			quals = append(quals, []byte(fmt.Sprintf("q%02d", i)))
		}
		rd, err := cellrec.NewRowDict(cellrec.NewDict(quals), fams)
		if err != nil {
			t.Fatal(err)
		}
		d := rd.Dict()
		qs := d.UsualQualifiers()
		r := usualRanks(qs, len(fams))
		usual := 0
		for b := range 256 {
			want := 0xff
			if b&0x81 == 1 && b>>1 < len(qs) {
				q, _, _, ok := d.NextUsual([]byte{byte(b), 1, 'v'})
				if !ok {
					t.Fatalf("byte %#x: not a usual cell", b)
				}
				want, _ = rd.Split(q)
				usual++
			}
			if int(r[b]) != want {
				t.Fatalf("%d qualifiers, byte %#x: rank %d, want %d", n, b, r[b], want)
			}
		}
		if usual != min(64, len(fams)*n) {
			t.Fatalf("%d usual bytes, want %d", usual, min(64, len(fams)*n))
		}
		if tr := usualRanks(cellrec.NewTaggedDict(quals).UsualQualifiers(), len(fams)); tr != usualRanks(nil, 0) || tr[1] != 0xff {
			t.Fatal("a tagged dictionary has usual cells")
		}
	}
}

// shareRow drops from the shared bloom each family that did not get a written cell of the previous row
// (sharePut), once, and keeps the others; before the first row none is dropped.
func TestShareRowDropsMissingFamilies(t *testing.T) {
	opts := hfilewriter.DefaultWriterOptions()
	share, err := hfilewriter.NewRowBloomShare(opts, 4)
	if err != nil {
		t.Fatal(err)
	}
	s := &stream{share: share, fws: make([]*fileWriter, 4)}
	s.shareStart()
	for row, got := range [][]int{{0, 1, 2, 3}, {0, 2, 3}, {0, 1, 2, 3}, {3}, {0, 1, 2, 3}, {}} {
		s.shareRow(hfilewriter.HashRow([]byte{byte(row)}))
		for _, rank := range got {
			s.sharePut(rank)
		}
	}
	s.shareRow(hfilewriter.HashRow([]byte("last")))
	// Family 1 missed the second row, 0 and 2 the fourth, 3 the sixth.
	if s.shareLive != 0 || s.shareGot != 0 {
		t.Fatalf("families in the share %04b, got the row %04b; want none", s.shareLive, s.shareGot)
	}
	s = &stream{share: share, fws: make([]*fileWriter, 4)}
	s.shareStart()
	for row, got := range [][]int{{0, 1, 2, 3}, {0, 2, 3}, {0, 2, 3}, {0, 1, 2}} {
		s.shareRow(hfilewriter.HashRow([]byte{byte(row)}))
		for _, rank := range got {
			s.sharePut(rank)
		}
	}
	s.shareRow(hfilewriter.HashRow([]byte("last")))
	if s.shareLive != 0b0101 {
		t.Fatalf("families in the share %04b, want 0101 (1 missed the second row, 3 the fourth)", s.shareLive)
	}
}
