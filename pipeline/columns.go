package pipeline

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hfload/hfload/internal/suggest"
)

// ImportTsv's special column names (org.apache.hadoop.hbase.mapreduce.ImportTsv.TsvParser).
const (
	ImportTsvRowKey         = "HBASE_ROW_KEY"
	ImportTsvTimestamp      = "HBASE_TS_KEY"
	ImportTsvAttributes     = "HBASE_ATTRIBUTES_KEY"
	ImportTsvCellVisibility = "HBASE_CELL_VISIBILITY"
	ImportTsvCellTTL        = "HBASE_CELL_TTL"
)

// ParseColumns reads an ImportTsv `-Dimporttsv.columns=` specification, e.g.
// "HBASE_ROW_KEY,d:name,d:age,HBASE_TS_KEY", with ImportTsv's meaning: entries map input columns by
// position; entries are trimmed; "family:qualifier" (split at the first ':') or "family" (empty qualifier)
// is a cell; HBASE_ROW_KEY (exactly one) is the row key; HBASE_TS_KEY (at most one) is the cell timestamp
// in epoch milliseconds (Long.parseLong; a bad value rejects the row). HBASE_ATTRIBUTES_KEY holds Put
// attributes, which never reach HFiles: the column is read and ignored, as in ImportTsv's bulk output.
//
// As ImportTsv does, every value is written as its text (type bytes: no UTF-8 check), an empty row key
// rejects the row, and a row with more fields
// than the spec has columns is rejected ("Excessive columns"). Missing trailing fields produce no cells.
// A NULL field (a Parquet null, or a text field NULL by the NULL rule of SourceOptions) produces no
// cell, as ImportTsv with importtsv.skip.empty.columns=true; a non-NULL empty field is an empty value.
//
// HBASE_CELL_TTL (milliseconds) and HBASE_CELL_VISIBILITY (an expression) become cell tags as ImportTsv's
// TextSortReducer writes them: visibility tags first, then a TTL tag (type 8) when the TTL is > 0. They
// need HFile format v3, and visibility needs the cluster's label ordinals (MappingConfig.Labels).
func ParseColumns(spec string, opts ...ImportTsvOption) (*MappingConfig, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errors.New("importtsv columns: empty specification")
	}
	entries := strings.Split(spec, ",")
	cfg := &MappingConfig{ImportTsv: true}
	rowKey, ts := -1, -1
	cells := 0
	for i, e := range entries {
		e = strings.TrimSpace(e)
		idx := i
		col := ColumnConfig{Name: "$" + strconv.Itoa(i), Index: &idx, Type: "bytes"}
		switch e {
		case ImportTsvRowKey:
			if rowKey >= 0 {
				return nil, fmt.Errorf("importtsv columns: %s appears twice (positions %d and %d)", e, rowKey+1, i+1)
			}
			rowKey = i
		case ImportTsvTimestamp:
			if ts >= 0 {
				return nil, fmt.Errorf("importtsv columns: %s appears twice (positions %d and %d)", e, ts+1, i+1)
			}
			ts = i
			col.Type = "long"
			col.OnNull = ""
		case ImportTsvAttributes:
		case ImportTsvCellTTL:
			col.Type = "long"
			if cfg.TTL != "" {
				return nil, fmt.Errorf("importtsv columns: %s appears twice (position %d)", e, i+1)
			}
			cfg.TTL = col.Name
		case ImportTsvCellVisibility:
			if cfg.Visibility != "" {
				return nil, fmt.Errorf("importtsv columns: %s appears twice (position %d)", e, i+1)
			}
			cfg.Visibility = col.Name
		case "":
			return nil, fmt.Errorf("importtsv columns: empty entry at position %d", i+1)
		default:
			if s := importTsvKeyword(e); s != "" {
				return nil, fmt.Errorf("importtsv columns: %q (position %d) is not an ImportTsv keyword: did you mean %s? (a whole-family cell with an empty qualifier is written %s:)",
					e, i+1, s, e)
			}
			fam, _, _ := strings.Cut(e, ":")
			if err := checkFamily(fam); err != nil {
				return nil, fmt.Errorf("importtsv columns: %q (position %d): %w", e, i+1, err)
			}
			col.Cell = e
			cells++
		}
		cfg.Columns = append(cfg.Columns, col)
	}
	if rowKey < 0 {
		return nil, fmt.Errorf("importtsv columns: must specify exactly one column as %s", ImportTsvRowKey)
	}
	if cells == 0 {
		return nil, errors.New("importtsv columns: one or more columns in addition to the row key and timestamp(optional) are required")
	}
	cfg.RowKey = []PartConfig{{Column: cfg.Columns[rowKey].Name}}
	if ts >= 0 {
		cfg.Timestamp.Column = cfg.Columns[ts].Name
	}
	for _, o := range opts {
		o(cfg)
	}
	return cfg, nil
}

// importTsvKeyword returns the ImportTsv keyword an entry without ':' was probably meant to be
// (HBASE_ROWKEY, hbase_row_key), or "". Without the check such an entry silently becomes a family.
func importTsvKeyword(e string) string {
	if strings.Contains(e, ":") {
		return ""
	}
	return suggest.Closest(strings.ToUpper(e), []string{ImportTsvRowKey, ImportTsvTimestamp, ImportTsvAttributes,
		ImportTsvCellVisibility, ImportTsvCellTTL})
}

// ImportTsvOption adjusts the config ParseColumns returns, like ImportTsv's -D settings.
type ImportTsvOption func(*MappingConfig)

// SkipEmptyColumns is -Dimporttsv.skip.empty.columns=true: empty fields too produce no cell (by default
// only NULL fields are skipped).
func SkipEmptyColumns(cfg *MappingConfig) {
	for i := range cfg.Columns {
		if cfg.Columns[i].Cell != "" {
			cfg.Columns[i].SkipEmpty = true
			cfg.Columns[i].OnNull = "skip"
		}
	}
}
