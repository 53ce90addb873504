package pipeline

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MappingConfig is the declarative description of how input rows become HBase cells. It is embedded in
// job files (YAML) by the jobs layer and produced by ParseColumns for ImportTsv-style column specs.
// Compile checks it and turns it into a *Mapping. docs/mapping.md documents every key.
type MappingConfig struct {
	// Families fixes the order of the families (Mapping.Families, RecordRef.Family). Optional: by default
	// families are numbered in order of first appearance in Columns, then Cells.
	Families []string `yaml:"families,omitempty" json:"families,omitempty"`
	// Columns are the input columns the mapping uses (by name or position).
	Columns []ColumnConfig `yaml:"columns" json:"columns"`
	// RowKey lists the parts of the row key, in order.
	RowKey []PartConfig `yaml:"rowkey" json:"rowkey"`
	// Cells are cells beyond the per-column `cell:` shorthand, e.g. with qualifiers built from data.
	Cells []CellConfig `yaml:"cells,omitempty" json:"cells,omitempty"`
	// Timestamp chooses the cells' timestamp; empty = the job's start time (RunOptions.Timestamp).
	Timestamp TimestampConfig `yaml:"timestamp,omitempty" json:"timestamp,omitempty"`
	// TTL names a column holding each row's cell TTL in milliseconds (ImportTsv's HBASE_CELL_TTL): every
	// cell of the row gets a TTL tag (type 8) when the value is > 0. Needs HFile format v3.
	TTL string `yaml:"ttl,omitempty" json:"ttl,omitempty"`
	// Visibility names a column holding each row's visibility expression (ImportTsv's
	// HBASE_CELL_VISIBILITY, e.g. "secret|(admin&!guest)"): every cell gets the visibility tags HBase
	// derives from it, with labels resolved to ordinals by Labels. Needs HFile format v3.
	Visibility string `yaml:"visibility,omitempty" json:"visibility,omitempty"`
	// Labels maps visibility labels to the ordinals of the cluster's hbase:labels table (a
	// label=ordinal file, see kv.ReadVisibilityLabels; set by the job's labels key).
	Labels map[string]int `yaml:"-" json:"-"`

	// ImportTsv selects ImportTsv's row semantics (set by ParseColumns; kept so that a config written
	// back to YAML means the same): a row with more fields than Columns is rejected, and columns missing
	// from the input produce no cells instead of failing the run.
	ImportTsv bool `yaml:"importtsv,omitempty" json:"importtsv,omitempty"`
}

// ColumnConfig describes one input column.
type ColumnConfig struct {
	// Name identifies the column in row-key parts, qualifiers and the timestamp. Without Index, it is
	// also looked up in the CSV header or the Parquet schema.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Index is the column's 0-based position in the input; it wins over the name lookup.
	Index *int `yaml:"index,omitempty" json:"index,omitempty"`
	// Type is the value's type and HBase encoding (string, bytes, long, int, short, double, float, boolean,
	// hex, base64, decimal, timestamp); "" = string.
	Type string `yaml:"type,omitempty" json:"type,omitempty"`
	// Format and Timezone apply to type timestamp and to columns used as times (timestamp.column,
	// time_bucket, time_offset, reverse_timestamp): s|ms|us|ns epoch, or a Go layout; default ms, UTC.
	Format   string `yaml:"format,omitempty" json:"format,omitempty"`
	Timezone string `yaml:"timezone,omitempty" json:"timezone,omitempty"`
	// Trim removes leading and trailing ASCII white space from text values before anything else.
	Trim bool `yaml:"trim,omitempty" json:"trim,omitempty"`
	// OnNull is what a NULL becomes in a cell: "skip" (no cell, the default) or "empty" (an empty
	// value). In a row-key part, a NULL rejects the row unless OnNull is "empty" or a Default is given.
	// (The key is not called `null` because YAML reads an unquoted `null:` key as a null.)
	OnNull string `yaml:"on_null,omitempty" json:"on_null,omitempty"`
	// SkipEmpty writes no cell when the value is empty text (after Trim) as well as when it is NULL:
	// ImportTsv's -Dimporttsv.skip.empty.columns=true.
	SkipEmpty bool `yaml:"skip_empty,omitempty" json:"skip_empty,omitempty"`
	// Default is the text used instead of NULL (then typed and encoded like any other value).
	Default *string `yaml:"default,omitempty" json:"default,omitempty"`
	// Cell is the target "family:qualifier" (the qualifier may be empty: "family" or "family:").
	// Without Cell (and without a use in Cells) the column only feeds the row key, qualifiers or timestamp.
	Cell string `yaml:"cell,omitempty" json:"cell,omitempty"`
}

// CellConfig is one cell per row whose qualifier may come from the data.
type CellConfig struct {
	Family string `yaml:"family" json:"family"`
	// Qualifier is a fixed qualifier, or a template with ${column} references ("${metric}|${tag}"); each
	// reference is encoded like a row-key column part with the column's type.
	Qualifier string `yaml:"qualifier,omitempty" json:"qualifier,omitempty"`
	// QualifierParts builds the qualifier from parts (same keys as row-key parts; no salt or hash).
	// Exclusive with Qualifier.
	QualifierParts []PartConfig `yaml:"qualifier_parts,omitempty" json:"qualifier_parts,omitempty"`
	// Value is the column whose value the cell holds (encoded with that column's type).
	Value string `yaml:"value" json:"value"`
}

// TimestampConfig chooses the cells' timestamp (epoch milliseconds). At most one of Column and Value.
type TimestampConfig struct {
	// Column names a column read as a time (its type/format/timezone; a long is epoch millis).
	Column string `yaml:"column,omitempty" json:"column,omitempty"`
	// Value is a fixed timestamp in epoch milliseconds.
	Value *int64 `yaml:"value,omitempty" json:"value,omitempty"`
}

// PartConfig is one part of a row key (or of a qualifier). Exactly one of Column, Literal, Salt, Hash,
// ReverseTimestamp, TimeBucket and TimeOffset is set; the other keys modify a Column part.
type PartConfig struct {
	// Column: the value of a column, encoded with Type (default: the column's type). Hex and base64
	// columns contribute their decoded bytes, string/bytes/decimal columns their text.
	Column string `yaml:"column,omitempty" json:"column,omitempty"`
	Type   string `yaml:"type,omitempty" json:"type,omitempty"`
	// FlipSign inverts the sign bit of long/int/short (and all bits of negative double/float) so that
	// unsigned byte order equals numeric order (the encoding of Phoenix and OrderedBytes).
	FlipSign bool `yaml:"flip_sign,omitempty" json:"flip_sign,omitempty"`
	// Reverse reverses the part's bytes (phone numbers, to spread a common prefix).
	Reverse bool `yaml:"reverse,omitempty" json:"reverse,omitempty"`
	// Width pads the part to exactly Width bytes with PadChar on the side given by Pad ("left", the
	// default, right-aligns the value; "right" left-aligns it). PadChar defaults to "0" for left padding
	// and " " for right padding; \xNN escapes are allowed. A longer value rejects the row.
	Width   int    `yaml:"width,omitempty" json:"width,omitempty"`
	Pad     string `yaml:"pad,omitempty" json:"pad,omitempty"`
	PadChar string `yaml:"pad_char,omitempty" json:"pad_char,omitempty"`

	// Literal: fixed bytes (a separator). Written as text; \xNN escapes as in Bytes.toStringBinary.
	Literal *string `yaml:"literal,omitempty" json:"literal,omitempty"`
	// Salt: one byte, Phoenix's salting: abs(Arrays.hashCode(rest)) % Salt over the key bytes that follow
	// it. 1..256 buckets.
	Salt int `yaml:"salt,omitempty" json:"salt,omitempty"`
	// Hash: the first Bytes (1..16, default 16) bytes of the MD5 of its Parts.
	Hash *HashConfig `yaml:"hash,omitempty" json:"hash,omitempty"`
	// ReverseTimestamp: Long.MAX_VALUE − the column's time in epoch millis, 8 bytes big-endian.
	ReverseTimestamp string `yaml:"reverse_timestamp,omitempty" json:"reverse_timestamp,omitempty"`
	// TimeBucket: the start of the time bucket containing the column's time.
	TimeBucket *TimeConfig `yaml:"time_bucket,omitempty" json:"time_bucket,omitempty"`
	// TimeOffset: the offset of the column's time within its bucket (OpenTSDB-style qualifiers).
	TimeOffset *TimeConfig `yaml:"time_offset,omitempty" json:"time_offset,omitempty"`
}

// HashConfig is an MD5 prefix of some parts.
type HashConfig struct {
	Parts []PartConfig `yaml:"parts" json:"parts"`
	Bytes int          `yaml:"bytes,omitempty" json:"bytes,omitempty"`
}

// TimeConfig parameterizes time_bucket and time_offset parts.
type TimeConfig struct {
	Column   string `yaml:"column" json:"column"`
	Interval string `yaml:"interval" json:"interval"`               // e.g. 1h, 15m, 1d
	Unit     string `yaml:"unit,omitempty" json:"unit,omitempty"`   // s (default) or ms
	Width    int    `yaml:"width,omitempty" json:"width,omitempty"` // bucket: 4 (default) or 8; offset: 2 (default), 3 or 4
}

// UnmarshalYAML accepts a part either as a mapping (the keys above) or as a one-line expression
// (see ParsePart): `host`, `'|'`, `salt(16)`, `hash(customer, 4)`, `reverse(phone)`,
// `reverse_timestamp(ts)`, `time_bucket(ts, 1h)`, `time_offset(ts, 1h, s, 2)`.
func (p *PartConfig) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind == yaml.ScalarNode {
		q, err := ParsePart(node.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", node.Line, err)
		}
		*p = q
		return nil
	}
	type plain PartConfig // no methods: avoids recursion
	return node.Decode((*plain)(p))
}

// ParsePart reads the one-line form of a part:
//
//	name                          the column's value (its own type)
//	'text'                        a literal (\xNN escapes allowed)
//	salt(N)                       Phoenix salt byte over the rest of the key, N buckets
//	hash(col[, col...][, n])      first n (default 16) bytes of MD5 of the columns' bytes
//	reverse(col)                  the column's bytes reversed
//	reverse_timestamp(col)        Long.MAX_VALUE − time in ms, 8 bytes
//	time_bucket(col, 1h[, s|ms[, 4|8]])
//	time_offset(col, 1h[, s|ms[, 2|3|4]])
func ParsePart(s string) (PartConfig, error) {
	s = strings.TrimSpace(s)
	var p PartConfig
	if s == "" {
		return p, errors.New("empty part")
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		lit := s[1 : len(s)-1]
		p.Literal = &lit
		return p, nil
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if strings.ContainsAny(s, ",)'") {
			return p, fmt.Errorf("part %q: not a column name or a function", s)
		}
		p.Column = s
		return p, nil
	}
	if !strings.HasSuffix(s, ")") {
		return p, fmt.Errorf("part %q: missing ')'", s)
	}
	fn := strings.TrimSpace(s[:open])
	var args []string
	if inner := strings.TrimSpace(s[open+1 : len(s)-1]); inner != "" {
		for _, a := range strings.Split(inner, ",") {
			args = append(args, strings.TrimSpace(a))
		}
	}
	want := func(min, max int) error {
		if len(args) < min || len(args) > max {
			return fmt.Errorf("part %q: %s takes %d to %d arguments", s, fn, min, max)
		}
		return nil
	}
	atoi := func(a string) (int, error) {
		n, err := strconv.Atoi(a)
		if err != nil {
			return 0, fmt.Errorf("part %q: %q is not a number", s, a)
		}
		return n, nil
	}
	var err error
	switch fn {
	case "salt":
		if err = want(1, 1); err == nil {
			p.Salt, err = atoi(args[0])
			if err == nil && p.Salt == 0 {
				err = fmt.Errorf("part %q: salt needs at least 1 bucket", s)
			}
		}
	case "hash", "md5":
		if err = want(1, 64); err == nil {
			h := &HashConfig{}
			for i, a := range args {
				if n, e := strconv.Atoi(a); e == nil && i == len(args)-1 && i > 0 {
					h.Bytes = n
					continue
				}
				h.Parts = append(h.Parts, PartConfig{Column: a})
			}
			p.Hash = h
		}
	case "reverse":
		if err = want(1, 1); err == nil {
			p.Column, p.Reverse = args[0], true
		}
	case "reverse_timestamp":
		if err = want(1, 1); err == nil {
			p.ReverseTimestamp = args[0]
		}
	case "time_bucket", "time_offset":
		if err = want(2, 4); err == nil {
			tc := &TimeConfig{Column: args[0], Interval: args[1]}
			if len(args) > 2 {
				tc.Unit = args[2]
			}
			if len(args) > 3 {
				tc.Width, err = atoi(args[3])
			}
			if fn == "time_bucket" {
				p.TimeBucket = tc
			} else {
				p.TimeOffset = tc
			}
		}
	default:
		err = fmt.Errorf("part %q: unknown function %q (want salt, hash, reverse, reverse_timestamp, time_bucket, time_offset)", s, fn)
	}
	return p, err
}
