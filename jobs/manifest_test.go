package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/pipeline"
	"github.com/klauspost/compress/gzip"
)

func goodCounts() Counts {
	return Counts{RowsRead: 10, RowsKeyed: 8, RowsRejected: 2, RowsWritten: 7, CellsEmitted: 30, CellsWritten: 25,
		Duplicates: 3, Combined: 2, BytesRead: 1000, FilesWritten: 2, BytesWritten: 300}
}

func TestCountsReconcile(t *testing.T) {
	if err := goodCounts().Reconcile(); err != nil {
		t.Fatal(err)
	}
	if err := (Counts{}).Reconcile(); err != nil {
		t.Errorf("empty run: %v", err)
	}
	cases := []struct {
		mod  func(c *Counts)
		want string
	}{
		{func(c *Counts) { c.RowsRejected = 1 }, "rows_read 10 != rows_keyed 8 + rows_rejected 1"},
		{func(c *Counts) { c.Duplicates = 0 }, "cells_emitted 30 != cells_written 25 + duplicates 0 + combined 2"},
		{func(c *Counts) { c.RowsWritten = 26 }, "rows_written 26 > cells_written 25"},
		{func(c *Counts) { c.RowsWritten = 0 }, "one is zero"},
		{func(c *Counts) { c.FilesWritten = 0 }, "files_written 0"},
		{func(c *Counts) { c.BytesRead = -1 }, "bytes_read = -1 is negative"},
	}
	for i, c := range cases {
		cnt := goodCounts()
		c.mod(&cnt)
		if err := cnt.Reconcile(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: got %v, want %q", i, err, c.want)
		}
	}
}

func TestManifestReconcileFiles(t *testing.T) {
	m := &Manifest{Counts: goodCounts(), Files: []OutputFile{
		{Family: "d", Path: "d/f1", Cells: 20, Bytes: 200},
		{Family: "m", Path: "m/f2", Cells: 5, Bytes: 100},
	}}
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	m.Files[1].Cells = 4
	m.Files[0].Path = "m/f1"
	err := m.Reconcile()
	if err == nil || !strings.Contains(err.Error(), "cells_written 25 but files hold 24") || !strings.Contains(err.Error(), `not directly under family "d"`) {
		t.Errorf("got %v", err)
	}
	m.Files = m.Files[:1]
	if err := m.Reconcile(); err == nil || !strings.Contains(err.Error(), "files_written 2 but 1 files listed") {
		t.Errorf("got %v", err)
	}
}

func TestManifestRoundTripAndDeterminism(t *testing.T) {
	m := &Manifest{ManifestVersion: ManifestVersion, Tool: "hfload", ToolVersion: "0.1", RunID: "r", Job: "nightly", Table: "ns:t",
		Started: time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC), Finished: time.Date(2026, 11, 22, 5, 1, 0, 0, time.UTC),
		Settings: map[string]any{"z": 1, "a": "x", "m": map[string]any{"k2": true, "k1": []any{1, 2}}},
		Inputs:   []InputFile{{Path: "/d/a.csv", Size: 3, MTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Checksum: "sha256:00"}},
		Files: []OutputFile{{Family: "d", Path: "d/x", Region: 1, RegionStart: `\x00`, RegionEnd: "m", FirstKey: "a<b>",
			LastKey: "k", Cells: 1, Bytes: 10}},
		Counts:    Counts{RowsRead: 1, RowsKeyed: 1, RowsWritten: 1, CellsEmitted: 1, CellsWritten: 1, FilesWritten: 1, BytesWritten: 10},
		Watermark: &Watermark{Column: "ts", Type: "number", Value: "42"},
	}
	m.SetCommands("/out dir/x")
	a, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		b, _ := m.Marshal()
		if !bytes.Equal(a, b) {
			t.Fatal("manifest bytes differ between marshals")
		}
	}
	if !bytes.Contains(a, []byte(`"first_key": "a<b>"`)) {
		t.Errorf("HTML escaping in manifest:\n%s", a)
	}
	if strings.Index(string(a), `"a": "x"`) > strings.Index(string(a), `"z": 1`) {
		t.Error("settings keys not sorted")
	}
	back, err := ReadManifest(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := back.Marshal()
	if !bytes.Equal(a, c) {
		t.Errorf("round trip differs:\n%s\n%s", a, c)
	}
	if back.Commands[0] != `hbase completebulkload '/out dir/x' ns:t` ||
		back.Commands[1] != `hbase org.apache.hadoop.hbase.tool.BulkLoadHFilesTool '/out dir/x' ns:t` {
		t.Errorf("commands: %q", back.Commands)
	}
	if _, err := ReadManifest(strings.NewReader(`{"manifest_version": 99}`)); err == nil {
		t.Error("future manifest version accepted")
	}
	if _, err := LoadManifest(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing manifest: %v", err)
	}
}

func TestBulkLoadCommandsQuoting(t *testing.T) {
	got := BulkLoadCommands("/a/it's", "t")
	if got[0] != `hbase completebulkload '/a/it'\''s' t` {
		t.Errorf("got %q", got[0])
	}
}

func TestChecksumAndFingerprint(t *testing.T) {
	p := filepath.Join(t.TempDir(), "abc")
	os.WriteFile(p, []byte("abc"), 0o644)
	sum, err := ChecksumFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	// FIPS 180-2 test vector for "abc".
	if sum != "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("sum = %s", sum)
	}
	fp, err := Fingerprint(context.Background(), p, true)
	if err != nil || fp.Size != 3 || fp.Checksum != sum || fp.MTime.IsZero() {
		t.Errorf("fingerprint %+v %v", fp, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ChecksumFile(ctx, p); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := Fingerprint(context.Background(), filepath.Dir(p), false); err == nil {
		t.Error("directory fingerprinted")
	}
	a := InputFile{Size: 3, MTime: fp.MTime, Checksum: "sha256:1"}
	if !a.SameContent(InputFile{Size: 3, MTime: fp.MTime.Add(time.Hour), Checksum: "sha256:1"}) ||
		a.SameContent(InputFile{Size: 3, MTime: fp.MTime, Checksum: "sha256:2"}) ||
		a.SameContent(InputFile{Size: 4, MTime: fp.MTime, Checksum: "sha256:1"}) ||
		!a.SameContent(InputFile{Size: 3, MTime: fp.MTime}) {
		t.Error("SameContent")
	}
}

// BenchmarkChecksum measures input fingerprinting throughput (SHA-256 of a
// cached 64 MiB file).
func BenchmarkChecksum(b *testing.B) {
	p := filepath.Join(b.TempDir(), "in")
	data := bytes.Repeat([]byte("0123456789abcdef"), 4<<20)
	os.WriteFile(p, data, 0o644)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ChecksumFile(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

// Text inputs are checksummed as they are loaded (digestInputs): the checksum of a file read once to
// its end, compressed or not and through a wrapped Open, is ChecksumFile's; a file read twice, or not
// at all, is read again.
func TestDigestInputsChecksumWhileLoading(t *testing.T) {
	dir := t.TempDir()
	var csv bytes.Buffer
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&csv, "r%05d,%d\n", i, i*7)
	}
	plain := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(plain, csv.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(csv.Bytes())
	zw.Close()
	packed := filepath.Join(dir, "b.csv.gz")
	if err := os.WriteFile(packed, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	drain := func(in pipeline.Input) {
		t.Helper()
		src, err := in.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		for {
			b, err := src.Next(context.Background())
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
	}
	for _, opens := range []int{0, 1, 2} {
		ins, err := pipeline.ExpandInputs([]string{plain, packed}, pipeline.SourceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		digests := digestInputs(ins)
		// Wrapped copies (as the engine's progress reporting makes) feed the same digests.
		for _, in := range ins {
			open := in.Open
			in.Open = func() (pipeline.Source, error) { return open() }
			for k := 0; k < opens; k++ {
				drain(in)
			}
		}
		fps, err := fingerprintInputs(context.Background(), ins, digests)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range []string{plain, packed} {
			want, err := ChecksumFile(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if fps[i].Checksum != want {
				t.Errorf("opened %d times: %s checksum %s, want %s", opens, p, fps[i].Checksum, want)
			}
			if used := digests[i].n == fps[i].Size; used != (opens == 1) {
				t.Errorf("opened %d times: %s: digest of %d bytes used %v (file %d bytes)", opens, p, digests[i].n, used, fps[i].Size)
			}
		}
	}
}

// A file's path must be <family>/<name>: a family that is a prefix or a suffix of the directory, a
// deeper path, no directory, a leading slash are refused.
func TestManifestReconcilePathUnderFamily(t *testing.T) {
	for path, ok := range map[string]bool{"d/f": true, "dd/f": false, "xd/f": false, "d/e/f": false, "f": false, "/d/f": false,
		"d/": true, "d//f": false, "e/f": false} {
		m := &Manifest{Counts: Counts{FilesWritten: 1}, Files: []OutputFile{{Family: "d", Path: path}}}
		err := m.Reconcile()
		if bad := err != nil && strings.Contains(err.Error(), "not directly under family"); bad == ok {
			t.Errorf("path %q: %v", path, err)
		}
	}
}

// Reconcile reports each path listed again (at the later index, however far apart) and each file of a
// family whose name is not valid (checked once per run of files of that family: every file of the run
// is reported), the good families between them not.
func TestManifestReconcileTwiceAndFamilies(t *testing.T) {
	m := &Manifest{Counts: Counts{FilesWritten: 6}, Files: []OutputFile{
		{Family: "d", Path: "d/a"}, {Family: ".x", Path: ".x/b"}, {Family: ".x", Path: ".x/c"},
		{Family: "d", Path: "d/e"}, {Family: "d", Path: "d/a"}, {Family: "d", Path: "d/e"}}}
	err := m.Reconcile()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`files[4]: path "d/a" listed twice`, `files[5]: path "d/e" listed twice`,
		`files[1]: family ".x" starts with '.'`, `files[2]: family ".x" starts with '.'`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: no %q", err, want)
		}
	}
	for _, not := range []string{"files[0]", "files[3]", `files[1]: path`, `files[2]: path`} {
		if strings.Contains(err.Error(), not) {
			t.Errorf("%v: %q", err, not)
		}
	}
}
