package kv

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// FormatCellLine formats a cell as one line of hfload's cell text format (no trailing newline):
//
//	row<TAB>family:qualifier<TAB>timestamp<TAB>type<TAB>value[<TAB>tags]
//
// with row, family, qualifier and value escaped by ToStringBinary. The sixth column, present only
// when the cell has tags, is FormatTags(c.Tags) (e.g. ttl=86400000,visfmt=1,vis=1&2). Sequence ids
// are not part of the format.
func FormatCellLine(c *Cell) string { return FormatCellLineLabels(c, nil) }

// FormatCellLineLabels is FormatCellLine with tags formatted by FormatTagsLabels (visibility tags as
// an expression over the label names in labels).
func FormatCellLineLabels(c *Cell, labels map[string]int) string {
	var sb strings.Builder
	sb.WriteString(ToStringBinary(c.Row))
	sb.WriteByte('\t')
	sb.WriteString(ToStringBinary(c.Family))
	sb.WriteByte(':')
	sb.WriteString(ToStringBinary(c.Qualifier))
	sb.WriteByte('\t')
	sb.WriteString(strconv.FormatInt(c.Timestamp, 10))
	sb.WriteByte('\t')
	sb.WriteString(c.Type.String())
	sb.WriteByte('\t')
	sb.WriteString(ToStringBinary(c.Value))
	if len(c.Tags) > 0 {
		sb.WriteByte('\t')
		sb.WriteString(FormatTagsLabels(c.Tags, labels))
	}
	return sb.String()
}

// ParseCellLine parses one line of the cell text format (see FormatCellLine). A trailing "\r" is ignored.
// An optional sixth column holds tags (ParseTags); visibility=EXPR needs labels, see ParseCellLineLabels.
func ParseCellLine(line string) (Cell, error) { return ParseCellLineLabels(line, nil) }

// ParseCellLineLabels is ParseCellLine with a visibility label → ordinal map for visibility=EXPR tags.
func ParseCellLineLabels(line string, labels map[string]int) (Cell, error) {
	line = strings.TrimSuffix(line, "\r")
	f := strings.Split(line, "\t")
	if len(f) != 5 && len(f) != 6 {
		return Cell{}, fmt.Errorf("want 5 or 6 tab-separated fields (row, family:qualifier, timestamp, type, value[, tags]), got %d", len(f))
	}
	var c Cell
	var err error
	if c.Row, err = FromStringBinary(f[0]); err != nil {
		return Cell{}, fmt.Errorf("row: %w", err)
	}
	col, err := FromStringBinary(f[1])
	if err != nil {
		return Cell{}, fmt.Errorf("column: %w", err)
	}
	i := bytes.IndexByte(col, ':')
	if i < 0 {
		return Cell{}, fmt.Errorf("column %q has no ':' between family and qualifier", f[1])
	}
	c.Family, c.Qualifier = col[:i], col[i+1:]
	if len(c.Family) == 0 {
		return Cell{}, fmt.Errorf("column %q has an empty family", f[1])
	}
	if c.Timestamp, err = strconv.ParseInt(f[2], 10, 64); err != nil {
		return Cell{}, fmt.Errorf("timestamp %q: %w", f[2], err)
	}
	if c.Type, err = ParseType(f[3]); err != nil {
		return Cell{}, err
	}
	if c.Value, err = FromStringBinary(f[4]); err != nil {
		return Cell{}, fmt.Errorf("value: %w", err)
	}
	if len(f) == 6 {
		if c.Tags, err = ParseTags(f[5], labels); err != nil {
			return Cell{}, fmt.Errorf("tags: %w", err)
		}
		if len(c.Tags) == 0 {
			c.Tags = nil
		}
	}
	if len(c.Row) == 0 {
		return Cell{}, fmt.Errorf("empty row")
	}
	if err := c.Validate(); err != nil {
		return Cell{}, err
	}
	return c, nil
}
