package jobs

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// Enumerations accepted by Validate (lower case; matching is case-insensitive and Validate
// normalizes the job's fields to lower case). Each call returns a new slice.

// Formats returns the input formats a job accepts.
func Formats() []string { return []string{"csv", "parquet"} }

// Compressions returns the HFile compression names a job accepts.
func Compressions() []string { return []string{"none", "gz", "snappy", "lz4", "zstd"} }

// Blooms returns the bloom filter types a job accepts.
func Blooms() []string { return []string{"none", "row", "rowcol"} }

// Encodings returns the data block encodings a job accepts.
func Encodings() []string { return []string{"none", "prefix", "diff", "fast_diff"} }

// DuplicatePolicies returns the duplicates policies a job accepts.
func DuplicatePolicies() []string { return []string{"error", "first", "last", "keep"} }

// Watermarks returns the incremental watermark types a job accepts.
func Watermarks() []string { return []string{"string", "number", "time"} }

// Limits of HBase's TableDescriptorChecker for a family's block size.
const (
	MinBlockSize = 1 << 10
	MaxBlockSize = 16 << 20
	minMemory    = 1 << 20
)

// Validate checks the job without reading any data: required keys, enums,
// sizes, mutually exclusive split options, legal family names, incremental
// settings. All problems are reported together, one per line; the error
// wraps ErrConfig. It lower-cases enum fields.
func (j *Job) Validate() error {
	var p problems
	j.validateRequired(&p)
	j.validateSettings(&p)
	j.validateSplits(&p)
	j.validateFamilies(&p)
	j.validateIncremental(&p)
	j.validateStorage(&p)
	j.validateLockLease(&p)
	if len(p) == 0 {
		return nil
	}
	where := "job"
	if j.File != "" {
		where = j.File
	}
	return classify(ErrConfig, fmt.Errorf("%s:\n  %s", where, strings.Join(p, "\n  ")))
}

// problems collects what Validate finds, one line each.
type problems []string

func (p *problems) add(format string, a ...any) { *p = append(*p, fmt.Sprintf(format, a...)) }

// enum lower-cases *v and checks it against allowed (empty: the default, not checked).
func (p *problems) enum(key string, v *string, allowed []string) {
	if *v == "" {
		return
	}
	*v = strings.ToLower(strings.TrimSpace(*v))
	for _, a := range allowed {
		if *v == a {
			return
		}
	}
	p.add("%s: %q is not one of %s", key, *v, strings.Join(allowed, ", "))
}

// blockSize checks a block size against HBase's limits (0: the default).
func (p *problems) blockSize(key string, s Size) {
	if s != 0 && (s < MinBlockSize || s > MaxBlockSize) {
		p.add("%s: %s is outside HBase's limits %s..%s", key, s, Size(MinBlockSize), Size(MaxBlockSize))
	}
}

// validateRequired checks the keys every job needs: input, table, out, and columns or mapping.
func (j *Job) validateRequired(p *problems) {
	if len(j.Input) == 0 {
		p.add("input: required (a list of files or globs, or - for stdin)")
	}
	for i, in := range j.Input {
		if strings.TrimSpace(in) == "" {
			p.add("input[%d]: empty path", i)
		} else if _, err := filepath.Match(in, ""); err != nil {
			p.add("input[%d]: %q is not a valid glob: %v", i, in, err)
		}
	}
	if j.Table == "" {
		p.add("table: required")
	} else if err := ValidTableName(j.Table); err != nil {
		p.add("table: %v", err)
	}
	if j.Out == "" {
		p.add("out: required (the output directory)")
	}
	hasMapping := !j.Mapping.IsZero()
	if j.Columns == "" && !hasMapping {
		p.add("columns or mapping: one is required (columns: HBASE_ROW_KEY,d:name,... or a mapping: section)")
	}
	if j.Columns != "" && hasMapping {
		p.add("columns and mapping: give one, not both")
	}
}

// validateSettings checks the enums, sizes and counts of the input and output settings.
func (j *Job) validateSettings(p *problems) {
	p.enum("format", &j.Format, Formats())
	if j.Separator != "" {
		if _, err := SeparatorByte(j.Separator); err != nil {
			p.add("separator: %v", err)
		}
	}
	if j.Dialect != "" {
		if d, err := pipeline.ParseDialect(j.Dialect); err != nil {
			p.add("dialect: %v", err)
		} else {
			j.Dialect = d
		}
	}
	if _, _, err := charOrNone(j.Quote); err != nil {
		p.add("quote: %v", err)
	}
	if _, _, err := charOrNone(j.Escape); err != nil {
		p.add("escape: %v", err)
	}
	p.enum("compression", &j.Compression, Compressions())
	p.enum("bloom", &j.Bloom, Blooms())
	p.enum("encoding", &j.Encoding, Encodings())
	p.enum("duplicates", &j.Duplicates, DuplicatePolicies())
	p.blockSize("block_size", j.BlockSize)
	if j.FormatVersion != 0 && j.FormatVersion != 2 && j.FormatVersion != 3 {
		p.add("format_version: %d (want 2 or 3)", j.FormatVersion)
	}
	if j.Memory < 0 || (j.Memory > 0 && j.Memory < minMemory) {
		p.add("memory: %s is below the minimum %s", j.Memory, Size(minMemory))
	}
	if j.MaxFileSize < 0 || (j.MaxFileSize > 0 && j.MaxFileSize < minMemory) {
		p.add("max_file_size: %s is below the minimum %s", j.MaxFileSize, Size(minMemory))
	}
	if j.Timestamp < 0 {
		p.add("timestamp: %d is negative (milliseconds since the epoch)", j.Timestamp)
	}
	if j.MaxRejects < -1 {
		p.add("max_rejects: %d (want -1 for unlimited, or >= 0)", j.MaxRejects)
	}
	if j.Workers < 0 {
		p.add("workers: %d is negative", j.Workers)
	}
}

// validateSplits checks the split settings: at most one source of split points.
func (j *Job) validateSplits(p *problems) {
	var splitKeys []string
	if j.Splits != "" {
		splitKeys = append(splitKeys, "splits")
	}
	if j.SplitsFrom != "" {
		splitKeys = append(splitKeys, "splits_from")
		if j.Table == "" {
			p.add("splits_from: needs table (the table whose regions are read)")
		} else if _, err := partition.RESTRegionsURL(j.SplitsFrom, j.Table); err != nil {
			p.add("splits_from: %v", err)
		}
	}
	for _, s := range []struct {
		key string
		n   int
	}{{"split_uniform", j.SplitUniform}, {"split_by_salt", j.SplitBySalt}, {"split_sample", j.SplitSample}} {
		if s.n < 0 || s.n > 1_000_000 {
			p.add("%s: %d (want 1..1000000 regions)", s.key, s.n)
		}
		if s.n != 0 {
			splitKeys = append(splitKeys, s.key)
		}
	}
	if len(splitKeys) > 1 {
		p.add("%s: give at most one way to split regions", strings.Join(splitKeys, ", "))
	}
	if j.Keyspace != "" {
		if j.SplitUniform == 0 {
			p.add("keyspace: only used with split_uniform")
		}
		if err := validKeyspace(j.Keyspace); err != nil {
			p.add("keyspace: %v", err)
		}
	}
}

// validateFamilies checks the per-family settings, in name order.
func (j *Job) validateFamilies(p *problems) {
	names := make([]string, 0, len(j.Families))
	for name := range j.Families {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := j.Families[name]
		if err := ValidFamilyName(name); err != nil {
			p.add("families: %v", err)
		}
		k := "families." + name + "."
		p.enum(k+"compression", &f.Compression, Compressions())
		p.enum(k+"bloom", &f.Bloom, Blooms())
		p.enum(k+"encoding", &f.Encoding, Encodings())
		p.blockSize(k+"block_size", f.BlockSize)
		j.Families[name] = f
	}
}

// validateIncremental checks the job name, state_dir and incremental settings.
func (j *Job) validateIncremental(p *problems) {
	// The name becomes a directory and lock name only with state_dir; a
	// one-off job file may have any base name.
	if j.StateDir != "" && j.Name != "" {
		if err := ValidJobName(j.Name); err != nil {
			p.add("name: %v", err)
		}
	}
	inc := &j.Incremental
	if inc.WatermarkType != "" && inc.Watermark == "" {
		p.add("incremental.watermark_type: set without incremental.watermark")
	}
	p.enum("incremental.watermark_type", &inc.WatermarkType, Watermarks())
	if !inc.IsZero() && j.StateDir == "" {
		p.add("incremental: needs state_dir (where runs and watermarks are recorded)")
	}
	if j.StateDir != "" && j.Name == "" {
		p.add("name: required with state_dir")
	}
}

// SeparatorByte returns the field separator byte: one character, or the
// escapes "\t", "tab", "\\t", "comma", "pipe", "semicolon", "space".
func SeparatorByte(s string) (byte, error) {
	switch strings.ToLower(s) {
	case `\t`, "tab":
		return '\t', nil
	case "comma":
		return ',', nil
	case "pipe":
		return '|', nil
	case "semicolon":
		return ';', nil
	case "space":
		return ' ', nil
	}
	if len(s) != 1 {
		return 0, fmt.Errorf("%q is not one byte (use \\t or tab for a tab)", s)
	}
	if s[0] == '"' || s[0] == '\n' || s[0] == '\r' {
		return 0, fmt.Errorf("%q cannot be the separator", s)
	}
	return s[0], nil
}

// charOrNone reads a --quote or --escape value: one byte (the separator's names and `\t` allowed too),
// or "none" for none at all; "" is unset (the dialect's).
func charOrNone(s string) (c byte, none bool, err error) {
	switch strings.ToLower(s) {
	case "":
		return 0, false, nil
	case "none":
		return 0, true, nil
	case `\\`, "backslash":
		return '\\', false, nil
	case `\t`, "tab":
		return '\t', false, nil
	}
	if len(s) != 1 {
		return 0, false, fmt.Errorf("%q is not one byte or none", s)
	}
	if s[0] == '\n' || s[0] == '\r' {
		return 0, false, fmt.Errorf("%q cannot be a line end", s)
	}
	return s[0], false, nil
}

// ValidFamilyName applies HBase's ColumnFamilyDescriptorBuilder
// isLegalColumnFamilyName rules: non-empty, not starting with '.', no ':',
// '\', '/' or ISO control characters, and not "recovered.edits".
// completebulkload silently skips directories that break them.
func ValidFamilyName(name string) error {
	if name == "" {
		return errors.New("family name is empty")
	}
	if name[0] == '.' {
		return fmt.Errorf("family %q starts with '.'", name)
	}
	if name == "recovered.edits" {
		return fmt.Errorf("family %q is reserved", name)
	}
	for _, r := range name {
		if r == ':' || r == '\\' || r == '/' || r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return fmt.Errorf("family %q contains illegal character %q", name, r)
		}
	}
	return nil
}

// ValidTableName applies HBase's TableName rules loosely: an optional
// "namespace:" prefix, then letters, digits, '_', '-', '.', not starting with
// '.' or '-'.
func ValidTableName(name string) error {
	ns, q, hasNS := strings.Cut(name, ":")
	if !hasNS {
		q, ns = ns, ""
	}
	check := func(part string, what string, allowDots bool) error {
		if part == "" {
			return fmt.Errorf("%q: empty %s", name, what)
		}
		if part[0] == '.' || part[0] == '-' {
			return fmt.Errorf("%q: %s starts with %q", name, what, part[0])
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			ok := c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				(allowDots && (c == '-' || c == '.'))
			if !ok {
				return fmt.Errorf("%q: illegal character %q in %s", name, c, what)
			}
		}
		return nil
	}
	if hasNS {
		if err := check(ns, "namespace", false); err != nil {
			return err
		}
	}
	return check(q, "table name", true)
}

// ValidJobName: a job name becomes a directory and file name, so it is
// letters, digits, '.', '_' and '-', not starting with '.'.
func ValidJobName(name string) error {
	if name == "" || name[0] == '.' || len(name) > 200 {
		return fmt.Errorf("%q: want 1..200 of letters, digits, '.', '_', '-', not starting with '.'", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			return fmt.Errorf("%q: illegal character %q (letters, digits, '.', '_', '-')", name, c)
		}
	}
	return nil
}

func validKeyspace(s string) error {
	kind, width, hasWidth := strings.Cut(s, ":")
	switch kind {
	case "hex", "decimal", "bytes":
	default:
		return fmt.Errorf("%q: want hex, decimal or bytes, optionally :WIDTH", s)
	}
	if hasWidth {
		n, err := strconv.Atoi(width)
		if err != nil || n < 1 || n > 64 {
			return fmt.Errorf("%q: width must be 1..64", s)
		}
	}
	return nil
}
