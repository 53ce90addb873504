package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hfload/hfload/internal/storage"
)

// ManifestName is the file written last into a committed output directory;
// its presence means the output is complete. completebulkload skips plain
// files directly under the output directory, so it does not disturb a load.
const ManifestName = "_manifest.json"

// ManifestVersion is the schema version of _manifest.json.
const ManifestVersion = 1

// Manifest describes one committed run. It is JSON with fixed field order;
// Settings is a map, which encoding/json writes with sorted keys, so the same
// run produces the same bytes.
type Manifest struct {
	ManifestVersion int            `json:"manifest_version"`
	Tool            string         `json:"tool"` // "hfload"
	ToolVersion     string         `json:"tool_version"`
	RunID           string         `json:"run_id"`
	Job             string         `json:"job,omitempty"`
	Table           string         `json:"table"`
	Started         time.Time      `json:"started"`
	Finished        time.Time      `json:"finished"`
	Settings        map[string]any `json:"settings,omitempty"` // Job.Settings()
	Inputs          []InputFile    `json:"inputs"`
	Files           []OutputFile   `json:"files"`
	Counts          Counts         `json:"counts"`
	Watermark       *Watermark     `json:"watermark,omitempty"`
	// Commands load the output into HBase: the classic completebulkload and
	// the 2.2+ BulkLoadHFilesTool. Filled by SetCommands.
	Commands []string `json:"commands"`
}

// InputFile fingerprints one input: size and mtime are cheap; Checksum
// ("sha256:<hex>", see ChecksumFile) catches same-size rewrites.
type InputFile struct {
	Path     string    `json:"path"` // as given (after glob expansion), absolute when known
	Size     int64     `json:"size"`
	MTime    time.Time `json:"mtime"`
	Checksum string    `json:"checksum,omitempty"`
	// ETag is an object's entity tag (inputs in a bucket): a rewrite within the same second changes it
	// where the last-modified time, kept to the second, does not.
	ETag string `json:"etag,omitempty"`
}

// SameContent reports whether two fingerprints describe the same file
// content: equal size and checksum when both have one, else equal size and
// mtime.
func (a InputFile) SameContent(b InputFile) bool {
	if a.Size != b.Size {
		return false
	}
	if a.Checksum != "" && b.Checksum != "" {
		return a.Checksum == b.Checksum
	}
	return a.MTime.Equal(b.MTime)
}

// OutputFile describes one HFile. Keys are in HBase's Bytes.toStringBinary
// notation (the caller converts with kv.ToStringBinary); FirstKey and
// LastKey are the first and last row keys.
type OutputFile struct {
	Family      string `json:"family"`
	Path        string `json:"path"` // relative to the output directory: <family>/<file>
	Region      int    `json:"region"`
	RegionStart string `json:"region_start"` // "" = first region
	RegionEnd   string `json:"region_end"`   // "" = last region
	FirstKey    string `json:"first_key"`
	LastKey     string `json:"last_key"`
	Cells       int64  `json:"cells"`
	Bytes       int64  `json:"bytes"`
}

// Counts are the run's row and cell totals. Reconcile checks they add up.
type Counts struct {
	RowsRead     int64 `json:"rows_read"`     // rows parsed from inputs
	RowsFiltered int64 `json:"rows_filtered"` // rows read but not loaded: at or below the previous watermark
	RowsKeyed    int64 `json:"rows_keyed"`    // rows that got a row key and emitted cells
	RowsRejected int64 `json:"rows_rejected"` // rows sent to the reject sink
	RowsWritten  int64 `json:"rows_written"`  // distinct row keys in the HFiles (per family, summed)
	CellsEmitted int64 `json:"cells_emitted"` // cells built by the pipeline
	CellsWritten int64 `json:"cells_written"` // cells in the HFiles
	Duplicates   int64 `json:"duplicates"`    // cells dropped by duplicates: first|last
	Combined     int64 `json:"combined"`      // cells folded into others by aggregate:
	NullsSkipped int64 `json:"nulls_skipped"` // null fields that produced no cell
	BytesRead    int64 `json:"bytes_read"`
	FilesWritten int64 `json:"files_written"`
	BytesWritten int64 `json:"bytes_written"`
	// DuplicatesKept: cells written under duplicates: keep whose key equals an earlier cell's (HBase
	// returns one cell per key); they are counted in cells_written too.
	DuplicatesKept int64 `json:"duplicates_kept"`
}

// Reconcile checks that the counts add up: rows_read = rows_filtered +
// rows_keyed + rows_rejected (every row read from the inputs was either
// skipped by the incremental watermark, loaded, or rejected; a row whose
// watermark value is NULL or unparseable is rejected); cells_emitted = cells_written + duplicates + combined;
// rows_written ≤ cells_written and > 0 iff cells were written; no negative
// count. It reports every mismatch.
func (c Counts) Reconcile() error {
	var probs []string
	vals := []struct {
		name string
		v    int64
	}{
		{"rows_read", c.RowsRead}, {"rows_filtered", c.RowsFiltered}, {"rows_keyed", c.RowsKeyed}, {"rows_rejected", c.RowsRejected},
		{"rows_written", c.RowsWritten}, {"cells_emitted", c.CellsEmitted}, {"cells_written", c.CellsWritten},
		{"duplicates", c.Duplicates}, {"duplicates_kept", c.DuplicatesKept}, {"combined", c.Combined}, {"nulls_skipped", c.NullsSkipped},
		{"bytes_read", c.BytesRead}, {"files_written", c.FilesWritten}, {"bytes_written", c.BytesWritten},
	}
	for _, v := range vals {
		if v.v < 0 {
			probs = append(probs, fmt.Sprintf("%s = %d is negative", v.name, v.v))
		}
	}
	if c.RowsFiltered == 0 && c.RowsRead != c.RowsKeyed+c.RowsRejected {
		probs = append(probs, fmt.Sprintf("rows_read %d != rows_keyed %d + rows_rejected %d", c.RowsRead, c.RowsKeyed, c.RowsRejected))
	} else if c.RowsRead != c.RowsFiltered+c.RowsKeyed+c.RowsRejected {
		probs = append(probs, fmt.Sprintf("rows_read %d != rows_filtered %d + rows_keyed %d + rows_rejected %d",
			c.RowsRead, c.RowsFiltered, c.RowsKeyed, c.RowsRejected))
	}
	if c.CellsEmitted != c.CellsWritten+c.Duplicates+c.Combined {
		probs = append(probs, fmt.Sprintf("cells_emitted %d != cells_written %d + duplicates %d + combined %d",
			c.CellsEmitted, c.CellsWritten, c.Duplicates, c.Combined))
	}
	if c.RowsWritten > c.CellsWritten {
		probs = append(probs, fmt.Sprintf("rows_written %d > cells_written %d", c.RowsWritten, c.CellsWritten))
	}
	if (c.RowsWritten == 0) != (c.CellsWritten == 0) {
		probs = append(probs, fmt.Sprintf("rows_written %d and cells_written %d: one is zero, the other not", c.RowsWritten, c.CellsWritten))
	}
	if c.FilesWritten == 0 && c.CellsWritten > 0 {
		probs = append(probs, fmt.Sprintf("cells_written %d but files_written 0", c.CellsWritten))
	}
	if len(probs) > 0 {
		return fmt.Errorf("counts do not reconcile: %s", strings.Join(probs, "; "))
	}
	return nil
}

// Reconcile checks the counts (Counts.Reconcile) and that the file list
// agrees with them: files_written = len(files), the sums of cells and bytes
// over files equal cells_written and bytes_written, every file has a legal
// family and a path under it, and no path repeats.
func (m *Manifest) Reconcile() error {
	var errs []error
	if err := m.Counts.Reconcile(); err != nil {
		errs = append(errs, err)
	}
	var cells, size int64
	// One map operation a file: a path put twice leaves the map's size as it was. The family's name
	// is checked where it changes (a load's files come by region, the families in turn).
	seen := make(map[string]struct{}, len(m.Files))
	famChecked, famErr := "", error(nil)
	for i := range m.Files {
		f := &m.Files[i]
		cells += f.Cells
		size += f.Bytes
		if i == 0 || f.Family != famChecked {
			famChecked, famErr = f.Family, ValidFamilyName(f.Family)
		}
		if famErr != nil {
			errs = append(errs, fmt.Errorf("files[%d]: %w", i, famErr))
		}
		if !underFamily(f.Path, f.Family) {
			errs = append(errs, fmt.Errorf("files[%d]: path %q is not directly under family %q", i, f.Path, f.Family))
		}
		n := len(seen)
		seen[f.Path] = struct{}{}
		if len(seen) == n {
			errs = append(errs, fmt.Errorf("files[%d]: path %q listed twice", i, f.Path))
		}
	}
	if int64(len(m.Files)) != m.Counts.FilesWritten {
		errs = append(errs, fmt.Errorf("files_written %d but %d files listed", m.Counts.FilesWritten, len(m.Files)))
	}
	if cells != m.Counts.CellsWritten {
		errs = append(errs, fmt.Errorf("cells_written %d but files hold %d cells", m.Counts.CellsWritten, cells))
	}
	if size != m.Counts.BytesWritten {
		errs = append(errs, fmt.Errorf("bytes_written %d but files hold %d bytes", m.Counts.BytesWritten, size))
	}
	return errors.Join(errs...)
}

// underFamily reports whether path (slash or OS separated) is a name directly under directory family:
// filepath.Split's directory of it is family + "/". The name is found with one IndexByte instead of
// Split's byte by byte scan back from the end (10,000 paths a commit at 10,000 regions).
func underFamily(path, family string) bool {
	p := filepath.ToSlash(path)
	if len(p) <= len(family) || p[len(family)] != '/' || p[:len(family)] != family {
		return false
	}
	name := p[len(family)+1:]
	if filepath.Separator == '/' {
		return strings.IndexByte(name, '/') < 0
	}
	dir, _ := filepath.Split(p) // another OS: its own separators and volume names
	return len(dir) == len(family)+1 && dir[:len(family)] == family
}

// BulkLoadCommands returns the commands that load dir into table: the
// classic `hbase completebulkload` (LoadIncrementalHFiles; HBase 1.x–2.x) and
// the HBase 2.2+ tool class. Arguments are shell-quoted when needed.
func BulkLoadCommands(dir, table string) []string {
	d, t := shellQuote(dir), shellQuote(table)
	return []string{
		"hbase completebulkload " + d + " " + t,
		"hbase org.apache.hadoop.hbase.tool.BulkLoadHFilesTool " + d + " " + t,
	}
}

// SetCommands fills Commands for the final output directory dir.
func (m *Manifest) SetCommands(dir string) { m.Commands = BulkLoadCommands(dir, m.Table) }

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r == ':' || r == '=' || r == '+' || r == ',' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// WriteTo writes the manifest JSON to w.
func (m *Manifest) WriteTo(w io.Writer) (int64, error) {
	b, err := m.Marshal()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(b)
	return int64(n), err
}

// ReadManifest parses a _manifest.json.
func ReadManifest(r io.Reader) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(r)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	if m.ManifestVersion != ManifestVersion {
		return nil, fmt.Errorf("manifest version %d not supported (want %d)", m.ManifestVersion, ManifestVersion)
	}
	return &m, nil
}

// loadOutputManifest is LoadManifest of a local directory or of a prefix in a bucket (s3://…); a
// missing manifest is fs.ErrNotExist (errors.Is) in both.
func loadOutputManifest(ctx context.Context, out string) (*Manifest, error) {
	if !storage.IsRemote(out) {
		return LoadManifest(out)
	}
	st, key, err := remoteStore(ctx, joinOut(out, ManifestName))
	if err != nil {
		return nil, err
	}
	r, err := st.Reader(ctx, key, 0)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	m, err := ReadManifest(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.URL(key), err)
	}
	return m, nil
}

// LoadManifest reads dir/_manifest.json. A missing file yields an error
// satisfying errors.Is(err, fs.ErrNotExist): the directory is not a
// committed output.
func LoadManifest(dir string) (*Manifest, error) {
	f, err := os.Open(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	defer f.Close()
	m, err := ReadManifest(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return m, nil
}

// ChecksumFile returns "sha256:<hex>" of the file's content. SHA-256 runs at
// memory-bandwidth-class speed with the CPU's SHA extensions (see
// BenchmarkChecksum) and needs no extra dependency. ctx is checked between
// 1 MiB reads.
func ChecksumFile(ctx context.Context, path string) (string, error) {
	f, err := openForChecksum(ctx, path)
	if err != nil {
		return "", fmt.Errorf("checksum: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("checksum %s: %w", path, err)
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("checksum %s: %w", path, err)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Fingerprint stats path and, when checksum is true, hashes it.
func Fingerprint(ctx context.Context, path string, checksum bool) (InputFile, error) {
	if storage.IsRemote(path) {
		return fingerprintRemote(ctx, path, checksum)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return InputFile{}, fmt.Errorf("fingerprint: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return InputFile{}, fmt.Errorf("fingerprint %s: not a regular file", path)
	}
	in := InputFile{Path: path, Size: fi.Size(), MTime: fi.ModTime().UTC()}
	if checksum {
		if in.Checksum, err = ChecksumFile(ctx, path); err != nil {
			return InputFile{}, err
		}
	}
	return in, nil
}

// NewManifest starts the manifest of a run of j: tool, version, run id, job
// name, table, start time and the effective settings. The caller fills
// Inputs, Files, Counts, Watermark and Finished, then passes it to
// Staging.Commit.
func NewManifest(j *Job, toolVersion, runID string, started time.Time) (*Manifest, error) {
	settings, err := j.Settings()
	if err != nil {
		return nil, err
	}
	return &Manifest{
		ManifestVersion: ManifestVersion,
		Tool:            "hfload",
		ToolVersion:     toolVersion,
		RunID:           runID,
		Job:             j.Name,
		Table:           j.Table,
		Started:         started.UTC(),
		Settings:        settings,
		Inputs:          []InputFile{},
		Files:           []OutputFile{},
	}, nil
}
