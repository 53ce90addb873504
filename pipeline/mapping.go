package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/internal/suggest"
)

// Mapping is a compiled, immutable MappingConfig. It is safe for concurrent use; each worker maps
// batches with its own Mapper (NewMapper).
type Mapping struct {
	cols      []column
	key       []part
	cells     []cellSpec
	dict      *cellrec.Dict // every fixed qualifier (cellSpec.qidx indexes it)
	families  []string
	ts        tsSource
	tsFixed   int64
	tsCol     int
	ttlCol    int // -1: no TTL column
	visCol    int // -1: no visibility column
	labels    map[string]int
	importTsv bool
	// importTsvWidth is the number of columns in an ImportTsv spec (rows with more fields are rejected).
	importTsvWidth int
	// plain holds the cells of a mapping whose cells all take a column's text as it is (see
	// compilePlain); nil for other mappings. keyCols are then the only columns mapRow reads into values.
	plain   []plainCell
	keyCols []int
	// plainOne: the plain cells are of one family with strictly ascending qualifier indexes, so each row
	// is one record (unless the row records of all families are made instead: Mapper.rows).
	plainOne bool
}

// plainCell is a cellSpec of a plain mapping with its column's flags at hand.
type plainCell struct {
	col       int
	qidx      int
	family    uint16
	famQual   int // len(fam) + len(qual)
	nullEmpty bool
	skipEmpty bool
	fam       []byte
}

// column is a compiled ColumnConfig.
type column struct {
	name      string
	index     int // input position; -1 = look the name up
	typ       Type
	tf        timeFormat
	trim      bool
	nullEmpty bool
	skipEmpty bool
	def       []byte
	hasDef    bool
}

// cellSpec is one cell emitted per row (when its value is not a skipped NULL).
type cellSpec struct {
	family uint16
	fam    []byte
	qual   []byte // fixed qualifier (when qparts is nil)
	qidx   int    // index of qual in Mapping.dict; -1 when the qualifier is built from data (qparts)
	qparts []part
	col    int // value slot
}

type tsSource uint8

const (
	tsJob tsSource = iota
	tsFixed
	tsColumn
)

// Compile checks cfg and compiles it. Errors name the offending column or part.
func Compile(cfg *MappingConfig) (*Mapping, error) {
	if cfg == nil {
		return nil, errors.New("mapping: no configuration")
	}
	m := &Mapping{importTsv: cfg.ImportTsv, tsCol: -1, ttlCol: -1, visCol: -1, labels: cfg.Labels}
	if m.importTsv {
		m.importTsvWidth = len(cfg.Columns)
	}
	names := map[string]int{}
	for i := range cfg.Columns {
		c, err := compileColumn(&cfg.Columns[i], i)
		if err != nil {
			return nil, fmt.Errorf("mapping: column %d (%s): %w", i+1, columnLabel(&cfg.Columns[i]), err)
		}
		if _, dup := names[c.name]; dup {
			return nil, fmt.Errorf("mapping: column name %q is used twice", c.name)
		}
		names[c.name] = i
		m.cols = append(m.cols, c)
	}
	ctx := &compileCtx{m: m, names: names}

	famIndex := map[string]int{}
	for _, f := range cfg.Families {
		if err := checkFamily(f); err != nil {
			return nil, fmt.Errorf("mapping: families: %w", err)
		}
		if _, dup := famIndex[f]; dup {
			return nil, fmt.Errorf("mapping: family %q listed twice", f)
		}
		famIndex[f] = len(m.families)
		m.families = append(m.families, f)
	}
	family := func(f string) (uint16, error) {
		if err := checkFamily(f); err != nil {
			return 0, err
		}
		if i, ok := famIndex[f]; ok {
			return uint16(i), nil
		}
		if len(cfg.Families) > 0 {
			return 0, fmt.Errorf("family %q is not in families %v", f, cfg.Families)
		}
		famIndex[f] = len(m.families)
		m.families = append(m.families, f)
		return uint16(len(m.families) - 1), nil
	}

	for i := range cfg.Columns {
		cc := &cfg.Columns[i]
		if cc.Cell == "" {
			continue
		}
		fam, qual, _ := strings.Cut(cc.Cell, ":")
		fi, err := family(fam)
		if err != nil {
			return nil, fmt.Errorf("mapping: column %q cell %q: %w", m.cols[i].name, cc.Cell, err)
		}
		m.cells = append(m.cells, cellSpec{family: fi, fam: []byte(fam), qual: []byte(qual), col: i})
	}
	for i := range cfg.Cells {
		cc := &cfg.Cells[i]
		where := fmt.Sprintf("mapping: cells[%d]", i)
		fi, err := family(cc.Family)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		slot, err := ctx.columnSlot(cc.Value)
		if err != nil {
			return nil, fmt.Errorf("%s value: %w", where, err)
		}
		cs := cellSpec{family: fi, fam: []byte(cc.Family), col: slot}
		switch {
		case len(cc.QualifierParts) > 0 && cc.Qualifier != "":
			return nil, fmt.Errorf("%s: qualifier and qualifier_parts are exclusive", where)
		case len(cc.QualifierParts) > 0:
			if cs.qparts, err = compileParts(cc.QualifierParts, ctx, where+" qualifier", false, true); err != nil {
				return nil, err
			}
		case strings.Contains(cc.Qualifier, "${"):
			pcs, err := parseTemplate(cc.Qualifier)
			if err != nil {
				return nil, fmt.Errorf("%s qualifier: %w", where, err)
			}
			if cs.qparts, err = compileParts(pcs, ctx, where+" qualifier", false, true); err != nil {
				return nil, err
			}
		default:
			cs.qual = []byte(cc.Qualifier)
		}
		m.cells = append(m.cells, cs)
	}
	if len(m.cells) == 0 {
		return nil, errors.New("mapping: no cells: give at least one column a `cell: family:qualifier` or add `cells`")
	}
	// Emit each row's cells in HBase order when every qualifier is fixed: the sorter then finds the
	// cells of one row already in order (cheap to sort), whatever order the columns were declared in.
	allFixed := true
	for _, cs := range m.cells {
		allFixed = allFixed && cs.qparts == nil
	}
	if allFixed {
		slices.SortStableFunc(m.cells, func(a, b cellSpec) int {
			if c := bytes.Compare(a.fam, b.fam); c != 0 {
				return c
			}
			return bytes.Compare(a.qual, b.qual)
		})
	}

	// The dictionary of fixed qualifiers: each such cell is emitted as its index, found here once.
	var quals [][]byte
	for _, cs := range m.cells {
		if cs.qparts == nil {
			quals = append(quals, cs.qual)
		}
	}
	if cfg.TTL != "" || cfg.Visibility != "" { // CellTags, once the columns are resolved below
		m.dict = cellrec.NewTaggedDict(quals)
	} else {
		m.dict = cellrec.NewDict(quals)
	}
	for k := range m.cells {
		cs := &m.cells[k]
		cs.qidx = -1
		if cs.qparts == nil {
			var ok bool
			if cs.qidx, ok = m.dict.Index(cs.qual); !ok {
				return nil, fmt.Errorf("mapping: qualifier %q missing from the dictionary", cs.qual)
			}
		}
	}

	if len(cfg.RowKey) == 0 {
		return nil, errors.New("mapping: rowkey has no parts")
	}
	var err error
	if m.key, err = compileParts(cfg.RowKey, ctx, "mapping: rowkey", true, true); err != nil {
		return nil, err
	}

	switch {
	case cfg.Timestamp.Column != "" && cfg.Timestamp.Value != nil:
		return nil, errors.New("mapping: timestamp: column and value are exclusive")
	case cfg.Timestamp.Column != "":
		if m.tsCol, err = ctx.columnSlot(cfg.Timestamp.Column); err != nil {
			return nil, fmt.Errorf("mapping: timestamp: %w", err)
		}
		m.ts = tsColumn
	case cfg.Timestamp.Value != nil:
		if *cfg.Timestamp.Value < 0 {
			return nil, fmt.Errorf("mapping: timestamp value %d is negative", *cfg.Timestamp.Value)
		}
		m.ts, m.tsFixed = tsFixed, *cfg.Timestamp.Value
	}
	if cfg.TTL != "" {
		if m.ttlCol, err = ctx.columnSlot(cfg.TTL); err != nil {
			return nil, fmt.Errorf("mapping: ttl: %w", err)
		}
	}
	if cfg.Visibility != "" {
		if m.visCol, err = ctx.columnSlot(cfg.Visibility); err != nil {
			return nil, fmt.Errorf("mapping: visibility: %w", err)
		}
	}
	m.compilePlain()
	return m, nil
}

// compilePlain sets m.plain and m.keyCols when every cell of m is a fixed qualifier whose value is its
// column's text unchanged (bytes, not trimmed, no default), the cells carry no tags and the timestamp
// does not come from a column: the most common mapping, ImportTsv's. mapRow then reads only the columns
// the row key uses into values and takes each cell's value straight from the batch (mapRowPlain).
// Any column a key part refers to, whatever the part's kind, counts as a key column.
func (m *Mapping) compilePlain() {
	if m.CellTags() || m.ts == tsColumn {
		return
	}
	plain := make([]plainCell, 0, len(m.cells))
	for _, cs := range m.cells {
		c := &m.cols[cs.col]
		if cs.qparts != nil || cs.qidx < 0 || c.typ != TypeBytes || c.trim || c.hasDef {
			return
		}
		plain = append(plain, plainCell{col: cs.col, qidx: cs.qidx, family: cs.family, famQual: len(cs.fam) + len(cs.qual),
			nullEmpty: c.nullEmpty, skipEmpty: c.skipEmpty, fam: cs.fam})
	}
	used := make([]bool, len(m.cols))
	var walk func(ps []part)
	walk = func(ps []part) {
		for i := range ps {
			if c := ps[i].col; c >= 0 && c < len(used) {
				used[c] = true
			}
			walk(ps[i].sub)
		}
	}
	walk(m.key)
	m.keyCols = m.keyCols[:0]
	for c, u := range used {
		if u {
			m.keyCols = append(m.keyCols, c)
		}
	}
	m.plain = plain
	m.plainOne = len(plain) > 0
	for k := 1; k < len(plain); k++ {
		if plain[k].family != plain[0].family || plain[k].qidx <= plain[k-1].qidx {
			m.plainOne = false
		}
	}
}

// plainFields appends to dst the plain cells' fields under the binding pos (Mapper.plainAt) and returns
// them with the highest field they read, or nil when the mapping is not plain and one record a row
// (plainOne; with rows, rows.plainOne), a cell's qualifier code takes more than one byte or a field
// position is out of reach. With rows the codes are the row dictionary's.
func (m *Mapping) plainFields(dst []plainField, pos []int, rows *rowPlan) ([]plainField, int) {
	if rows == nil && !m.plainOne || rows != nil && !rows.plainOne {
		return nil, 0
	}
	hi := 0
	for k, pc := range m.plain {
		qidx := pc.qidx
		if rows != nil {
			qidx = rows.plain[k]
		}
		code, f := 2*qidx+1, pos[pc.col]
		if qidx < 0 || code >= 0x80 || f < 0 || f >= 1<<30 || pc.famQual >= 1<<30 {
			return nil, 0
		}
		dst = append(dst, plainField{f: int32(f), famQual: int32(pc.famQual), code: byte(code),
			skipNull: !pc.nullEmpty || pc.skipEmpty, skipEmpty: pc.skipEmpty})
		hi = max(hi, f)
	}
	return dst, hi
}

// keyField returns the value slot of a row key made of one column as it is (type bytes or string: its
// text or binary value unchanged, valid UTF-8 for string; no flip, reverse or padding), and whether its
// type is string; -1 for any other key.
func (m *Mapping) keyField() (int, bool) {
	if len(m.key) != 1 {
		return -1, false
	}
	if p := &m.key[0]; p.kind == pkColumn && (p.typ == TypeBytes || p.typ == TypeString) && !p.flip && !p.reverse && p.width == 0 {
		return p.col, p.typ == TypeString
	}
	return -1, false
}

// CellTags reports whether the mapping gives cells tags (a ttl or visibility column). Its dictionary is
// then tagged (cellrec.NewTaggedDict): every cell of its records carries the row's tags in a field of
// its own, and the KeyValues they expand to have HBase's tags length and tags after the value.
func (m *Mapping) CellTags() bool { return m.ttlCol >= 0 || m.visCol >= 0 }

func columnLabel(c *ColumnConfig) string {
	if c.Name != "" {
		return c.Name
	}
	if c.Index != nil {
		return "index " + strconv.Itoa(*c.Index)
	}
	return "unnamed"
}

func compileColumn(cc *ColumnConfig, i int) (column, error) {
	c := column{name: cc.Name, index: -1}
	if cc.Index != nil {
		if *cc.Index < 0 {
			return c, fmt.Errorf("negative index %d", *cc.Index)
		}
		c.index = *cc.Index
		if c.name == "" {
			c.name = strconv.Itoa(c.index)
		}
	}
	if c.name == "" {
		return c, errors.New("a column needs a name or an index")
	}
	var err error
	if c.typ, err = ParseType(cc.Type); err != nil {
		return c, err
	}
	if c.tf, err = parseTimeFormat(cc.Format, cc.Timezone); err != nil {
		return c, err
	}
	c.trim, c.skipEmpty = cc.Trim, cc.SkipEmpty
	switch strings.ToLower(cc.OnNull) {
	case "", "skip":
	case "empty":
		c.nullEmpty = true
	default:
		return c, fmt.Errorf("on_null %q: want skip or empty", cc.OnNull)
	}
	if cc.Default != nil {
		c.def, c.hasDef = []byte(*cc.Default), true
		var e encoder
		v := value{kind: vkText, b: c.def}
		if _, err := e.encode(nil, &v, c.typ, &c.tf); err != nil {
			return c, fmt.Errorf("default %q: %w", *cc.Default, err)
		}
	}
	return c, nil
}

// checkFamily applies HBase's rules for family names (ColumnFamilyDescriptorBuilder.
// isLegalColumnFamilyName, and the length limit of a cell's family). A name HBase refuses would only be
// refused at commit, after the whole load, or be skipped by completebulkload.
func checkFamily(f string) error {
	switch {
	case f == "":
		return errors.New("empty family name")
	case f == "recovered.edits":
		return fmt.Errorf("family %q is reserved by HBase (a region's directory of recovered edits)", f)
	case len(f) > kv.MaxFamilyLength:
		return fmt.Errorf("family %q is longer than %d bytes", f, kv.MaxFamilyLength)
	case strings.ContainsAny(f, ":/\\") || f[0] == '.':
		return fmt.Errorf("family %q: names cannot contain ':', '/' or '\\' or start with '.'", f)
	}
	for i := 0; i < len(f); i++ {
		if f[i] < 0x20 || f[i] == 0x7f {
			return fmt.Errorf("family %q contains a control character", f)
		}
	}
	return nil
}

type compileCtx struct {
	m     *Mapping
	names map[string]int
}

func (c *compileCtx) columnSlot(name string) (int, error) {
	if i, ok := c.names[name]; ok {
		return i, nil
	}
	names := make([]string, 0, len(c.names))
	for n := range c.names {
		names = append(names, n)
	}
	sort.Strings(names)
	if s := suggest.Closest(name, names); s != "" {
		return 0, fmt.Errorf("unknown column %q (did you mean %q? otherwise declare it under columns)", name, s)
	}
	return 0, fmt.Errorf("unknown column %q (declare it under columns)", name)
}

func (c *compileCtx) columnType(slot int) Type { return c.m.cols[slot].typ }

// parseTemplate turns "${metric}|${tag}" into column and literal parts.
func parseTemplate(s string) ([]PartConfig, error) {
	var parts []PartConfig
	for len(s) > 0 {
		i := strings.Index(s, "${")
		if i < 0 {
			lit := s
			parts = append(parts, PartConfig{Literal: &lit})
			break
		}
		if i > 0 {
			lit := s[:i]
			parts = append(parts, PartConfig{Literal: &lit})
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("template %q: unclosed ${", s)
		}
		name := s[i+2 : i+j]
		if name == "" {
			return nil, fmt.Errorf("template %q: empty ${}", s)
		}
		parts = append(parts, PartConfig{Column: name})
		s = s[i+j+1:]
	}
	return parts, nil
}

// Families returns the family names in the order of RecordRef.Family indexes.
func (m *Mapping) Families() []string { return append([]string(nil), m.families...) }

// Dict returns the dictionary of the mapping's fixed qualifiers (all families; not to be modified): the
// dictionary qualifiers of the records the mapping emits index it. Qualifiers built from data are
// written as literal qualifiers.
func (m *Mapping) Dict() *cellrec.Dict { return m.dict }

// NeedsJobTimestamp reports whether cell timestamps come from RunOptions.Timestamp.
func (m *Mapping) NeedsJobTimestamp() bool { return m.ts == tsJob }

// bind resolves the input position of every column for a file with the given header (nil when the
// input has none) and field count.
func (m *Mapping) bind(header []string, numCols int) ([]int, error) {
	pos := make([]int, len(m.cols))
	for i := range m.cols {
		c := &m.cols[i]
		if c.index >= 0 {
			if c.index >= numCols && !m.importTsv {
				return nil, fmt.Errorf("column %q: index %d but the input has %d columns", c.name, c.index, numCols)
			}
			pos[i] = c.index
			continue
		}
		if header == nil {
			return nil, fmt.Errorf("column %q: the input has no header to find it by name (give an index, or read the CSV header)", c.name)
		}
		p, err := findHeader(header, c.name)
		if err != nil {
			return nil, err
		}
		pos[i] = p
	}
	return pos, nil
}

// findHeader finds name in header: an exact match, else a unique match ignoring case and surrounding
// spaces. Ambiguous names are an error (give an index instead).
func findHeader(header []string, name string) (int, error) {
	found, n := -1, 0
	for j, h := range header {
		if h == name {
			found, n = j, n+1
		}
	}
	if n == 0 {
		for j, h := range header {
			if strings.EqualFold(strings.TrimSpace(h), strings.TrimSpace(name)) {
				found, n = j, n+1
			}
		}
	}
	switch {
	case n == 0:
		if s := suggest.Closest(name, header); s != "" {
			return 0, fmt.Errorf("column %q is not in the input's columns %q (did you mean %q?)", name, header, s)
		}
		return 0, fmt.Errorf("column %q is not in the input's columns %q", name, header)
	case n > 1:
		return 0, fmt.Errorf("column %q appears %d times in the input's columns %q; give its index", name, n, header)
	}
	return found, nil
}
