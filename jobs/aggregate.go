package jobs

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
	"gopkg.in/yaml.v3"
)

// AggregateRule is one entry of a job file's `aggregate:` section (docs/wide-rows.md): cells whose
// family and qualifier match Cell and whose keys are equal (same row, family, qualifier, timestamp)
// are folded into one cell with Op over values of Type.
//
//	aggregate:
//	  - {cell: "d:revenue", op: sum, type: decimal}
//	  - {cell: "d:orders",  op: count}            # value from the built-in column _one
//	  - {cell: "t:*",       op: max, type: double} # every qualifier of family t
type AggregateRule struct {
	// Cell selects cells: "family" or "family:*" (any qualifier), "family:qualifier" (exactly; the
	// qualifier in Bytes.toStringBinary notation, \xNN escapes), "family:prefix*" (qualifiers starting
	// with prefix). The first rule that matches a cell applies.
	Cell string `yaml:"cell"`
	// Op is sum, count, min, max, first or last.
	Op string `yaml:"op"`
	// Type is the encoding of the values: long (8-byte big-endian), double (8-byte IEEE 754), decimal
	// (text, exact) or string (bytes, min/max/first/last only). Required for sum, min and max; count
	// is always long; first and last ignore it.
	Type string `yaml:"type,omitempty"`
}

// OneColumn is the built-in column that a job with an `aggregate:` section may use as a cell value:
// the long 1 in every row, the initial value of a count cell.
const OneColumn = "_one"

// Aggregation is a compiled `aggregate:` section: one combine function for a run that picks the
// aggregator by the cell's family and qualifier. Cells that no rule covers are not aggregated: equal
// keys among them follow the job's duplicates policy (error, the default, fails the run; first and
// last keep one cell; keep cannot be combined with aggregation and is rejected).
type Aggregation struct {
	rules   []aggRule
	dup     DuplicatePolicy
	seqLast bool // some op keeps the latest cell: the sorter orders partial groups by their last seq
	one     bool // the mapping uses the _one column: the inputs get it
	file    string

	mu  sync.Mutex
	err error // first duplicate among cells no rule covers
}

type aggRule struct {
	text    string // the rule's cell as written, for messages
	line    int
	family  []byte
	qual    []byte
	anyQual bool // family or family:*
	prefix  bool // family:prefix*
	op, typ string
	agg     *sorter.Aggregator
}

func (r *aggRule) matches(family, qual []byte) bool {
	if !bytes.Equal(family, r.family) {
		return false
	}
	switch {
	case r.anyQual:
		return true
	case r.prefix:
		return bytes.HasPrefix(qual, r.qual)
	}
	return bytes.Equal(qual, r.qual)
}

// AggregateRules decodes the job's `aggregate:` section (nil when there is none), rejecting unknown
// keys with their line numbers.
func (j *Job) AggregateRules() ([]AggregateRule, []int, error) {
	n := &j.Aggregate
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
		return nil, nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, nil, fmt.Errorf("%w: aggregate: line %d: want a list of {cell, op, type} entries", ErrConfig, n.Line)
	}
	var rules []AggregateRule
	var lines []int
	name := j.fileLabel()
	for _, e := range n.Content {
		var r AggregateRule
		if err := checkKeys(name, e, reflect.TypeOf(r), "aggregate."); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		if err := e.Decode(&r); err != nil {
			return nil, nil, fmt.Errorf("%w: %s:%d: aggregate: %w", ErrConfig, name, e.Line, err)
		}
		rules = append(rules, r)
		lines = append(lines, e.Line)
	}
	return rules, lines, nil
}

// fileLabel names the job file in messages.
func (j *Job) fileLabel() string {
	if j.File != "" {
		return filepath.Base(j.File)
	}
	return "job file"
}

// Aggregation compiles the job's `aggregate:` section against its mapping config; nil (and no error)
// when the job has none. It must run before pipeline.Compile: when the mapping uses the column _one
// without declaring it, Aggregation adds it to cfg (type long). Checks made here: families exist in
// the mapping, ops and types are known, cell timestamps do not come from the data (cells must share
// the job's timestamp for their keys to meet), the duplicates policy is not keep, first and last are
// not mixed, and every mapping cell a rule surely covers (fixed qualifiers; templated ones under a
// family or matching prefix rule) holds a column of the rule's type (count cells: the column _one).
func (j *Job) Aggregation(cfg *pipeline.MappingConfig, dup DuplicatePolicy) (*Aggregation, error) {
	rules, lines, err := j.AggregateRules()
	if err != nil || len(rules) == 0 {
		return nil, err
	}
	fail := func(line int, format string, args ...any) (*Aggregation, error) {
		return nil, fmt.Errorf("%w: %s:%d: aggregate: %s", ErrConfig, j.fileLabel(), line, fmt.Sprintf(format, args...))
	}
	if dup == DuplicatesKeep {
		return fail(lines[0], "duplicates: keep cannot be combined with aggregation (equal keys are folded); use error, first or last for the cells no rule covers")
	}
	if cfg.Timestamp.Column != "" {
		return fail(lines[0], "cells fold only when their keys are equal, timestamps included: remove mapping.timestamp.column %q (aggregated cells carry the job's timestamp)", cfg.Timestamp.Column)
	}
	a := &Aggregation{dup: dup, file: j.fileLabel()}
	families := cfgFamilies(cfg)
	var firstLine, lastLine int
	if dup == DuplicatesFirst {
		firstLine = lines[0]
	}
	if dup == DuplicatesLast {
		lastLine = lines[0]
	}
	for i, r := range rules {
		ar := aggRule{text: r.Cell, line: lines[i], op: strings.ToLower(strings.TrimSpace(r.Op)), typ: strings.ToLower(strings.TrimSpace(r.Type))}
		fam, qual, hasQual := strings.Cut(r.Cell, ":")
		if fam == "" {
			return fail(ar.line, "cell %q: want family, family:qualifier or family:prefix*", r.Cell)
		}
		if !families[fam] {
			return fail(ar.line, "cell %q: %q is not a family of the mapping", r.Cell, fam)
		}
		ar.family = []byte(fam)
		switch {
		case !hasQual || qual == "*":
			ar.anyQual = true
		case strings.HasSuffix(qual, "*"):
			ar.prefix = true
			qual = strings.TrimSuffix(qual, "*")
		}
		if !ar.anyQual {
			if ar.qual, err = kv.FromStringBinary(qual); err != nil {
				return fail(ar.line, "cell %q: qualifier: %v", r.Cell, err)
			}
		}
		switch ar.op {
		case "":
			return fail(ar.line, "cell %q: op is required (sum, count, min, max, first or last)", r.Cell)
		case "sum", "min", "max":
			if ar.typ == "" {
				return fail(ar.line, "cell %q: %s needs a type (long, double, decimal or string)", r.Cell, ar.op)
			}
		case "count":
			if ar.typ != "" && ar.typ != "long" {
				return fail(ar.line, "cell %q: count values are longs (the column %s), not %s", r.Cell, OneColumn, ar.typ)
			}
			ar.typ = "long"
		case "first":
			firstLine = ar.line
		case "last":
			lastLine = ar.line
		}
		if ar.agg, err = sorter.NewAggregator(ar.op, ar.typ); err != nil {
			return fail(ar.line, "cell %q: %v", r.Cell, err)
		}
		a.rules = append(a.rules, ar)
	}
	if firstLine != 0 && lastLine != 0 {
		return fail(max(firstLine, lastLine), "first and last cannot be mixed in one job (duplicates: first/last counts as one); the sorter keeps either the earliest or the latest partial group order")
	}
	a.seqLast = lastLine != 0
	if err := a.checkCells(cfg, j.fileLabel()); err != nil {
		return nil, err
	}
	return a, nil
}

// cfgFamilies lists the families a mapping config names.
func cfgFamilies(cfg *pipeline.MappingConfig) map[string]bool {
	fams := map[string]bool{}
	for _, f := range cfg.Families {
		fams[f] = true
	}
	for _, c := range cfg.Columns {
		if c.Cell != "" {
			f, _, _ := strings.Cut(c.Cell, ":")
			fams[f] = true
		}
	}
	for _, c := range cfg.Cells {
		fams[c.Family] = true
	}
	return fams
}

// checkCells checks the value columns of the cells that rules cover and adds the _one column when the
// mapping uses it without declaring it.
func (a *Aggregation) checkCells(cfg *pipeline.MappingConfig, file string) error {
	colType := map[string]string{}
	declared := false
	for _, c := range cfg.Columns {
		colType[c.Name] = strings.ToLower(c.Type)
		if c.Name == OneColumn {
			declared = true
			a.one = true
		}
	}
	type cell struct {
		family, qual, value string
		fixed               bool
		litPrefix           string // a templated qualifier's text before its first ${
	}
	var cells []cell
	for _, c := range cfg.Columns {
		if c.Cell != "" {
			f, q, _ := strings.Cut(c.Cell, ":")
			cells = append(cells, cell{f, q, c.Name, true, ""})
		}
	}
	for _, c := range cfg.Cells {
		if c.Value == OneColumn {
			a.one = true
		}
		fixed := len(c.QualifierParts) == 0 && !strings.Contains(c.Qualifier, "${")
		lit := ""
		if len(c.QualifierParts) == 0 {
			lit, _, _ = strings.Cut(c.Qualifier, "${")
		}
		cells = append(cells, cell{c.Family, c.Qualifier, c.Value, fixed, lit})
	}
	if a.one && !declared {
		cfg.Columns = append(cfg.Columns, pipeline.ColumnConfig{Name: OneColumn, Type: "long"})
		colType[OneColumn] = "long"
	}
	for _, c := range cells {
		var r *aggRule
		for i := range a.rules {
			rr := &a.rules[i]
			if c.fixed {
				if rr.matches([]byte(c.family), []byte(c.qual)) {
					r = rr
					break
				}
				continue
			}
			// A templated qualifier (it starts with litPrefix): rules that cannot match it are
			// skipped; the first that surely covers all its qualifiers (the whole family, or a prefix
			// that litPrefix has) is checked; one that may or may not match, depending on the data,
			// ends the static check.
			if string(rr.family) != c.family {
				continue
			}
			q := string(rr.qual)
			if rr.anyQual || rr.prefix && strings.HasPrefix(c.litPrefix, q) {
				r = rr
				break
			}
			if strings.HasPrefix(q, c.litPrefix) {
				break
			}
		}
		if r == nil {
			continue
		}
		where := fmt.Sprintf("%s:%d: aggregate: cell %q (%s) covers the mapping's cell %s:%s", file, r.line, r.text, r.op, c.family, c.qual)
		ct, err := pipeline.ParseType(colType[c.value])
		if err != nil {
			continue // pipeline.Compile reports it
		}
		typ := ct.String()
		switch {
		case r.op == "count" && c.value != OneColumn:
			return fmt.Errorf("%w: %s, whose value is the column %q: a count cell takes its value from the column %s (the long 1)", ErrConfig, where, c.value, OneColumn)
		case r.op == "count" && ct != pipeline.TypeLong:
			return fmt.Errorf("%w: %s: the column %s must have type long, not %s", ErrConfig, where, OneColumn, typ)
		case r.op == "first" || r.op == "last" || r.typ == "string":
		case !valueTypeFits(r.typ, ct):
			return fmt.Errorf("%w: %s, whose value is the column %q of type %s: %s(%s) needs a column of type %s", ErrConfig, where, c.value, typ, r.op, r.typ, r.typ)
		}
	}
	return nil
}

// valueTypeFits reports whether cells of a column of type ct hold values of the aggregate type typ.
func valueTypeFits(typ string, ct pipeline.Type) bool {
	switch typ {
	case "long":
		return ct == pipeline.TypeLong || ct == pipeline.TypeTimestamp // both 8-byte big-endian longs
	case "double":
		return ct == pipeline.TypeDouble
	case "decimal":
		return ct == pipeline.TypeDecimal
	}
	return true
}

// Apply makes spec aggregate: it sets Combine, CombineErr and FoldSeqLast, and gives the inputs the
// _one column when the mapping uses it.
func (a *Aggregation) Apply(spec *RunSpec) {
	spec.Combine = a.Combine
	spec.CombineErr = a.Err
	spec.FoldSeqLast = a.seqLast
	spec.CombineAssociative = a.associative()
	if a.one {
		spec.Inputs = pipeline.WithConstantColumn(spec.Inputs, OneColumn, "1")
	}
}

// associative reports whether folding gives the same bytes however the cells of one key are cut into
// runs of consecutive input rows folded first (a MapReduce combiner's partial folds): true unless a
// rule sums doubles, whose rounding depends on the grouping. Integer and decimal sums are exact;
// min/max pick by a total order (ties keep the earlier cell); first/last go by the cells' seqs, which
// a partial fold carries; cells no rule covers keep the first or last (or fail).
func (a *Aggregation) associative() bool {
	for i := range a.rules {
		if a.rules[i].op == "sum" && a.rules[i].typ == "double" {
			return false
		}
	}
	return true
}

// Combine folds the values of two cells with equal keys (a's earlier) into dst with the first rule that
// matches their family and qualifier (a sorter.CombineFunc); cells no rule covers follow the duplicates
// policy.
func (a *Aggregation) Combine(dst []byte, h *cellrec.Header, qual, x, y []byte) []byte {
	for i := range a.rules {
		if a.rules[i].matches(h.Family, qual) {
			return a.rules[i].agg.Combine(dst, h, qual, x, y)
		}
	}
	switch a.dup {
	case DuplicatesFirst:
		return append(dst, x...)
	case DuplicatesLast:
		return append(dst, y...)
	}
	a.mu.Lock()
	if a.err == nil {
		a.err = fmt.Errorf("%w: key %s is not covered by any aggregate: rule (add one, or use --duplicates first|last)",
			ErrDuplicates, kv.Key(cellrec.AppendKey(nil, h, qual)))
	}
	a.mu.Unlock()
	return append(dst, x...)
}

// Err returns the first error met while folding (a long overflow, a malformed value, a duplicate key no
// rule covers), or nil.
func (a *Aggregation) Err() error {
	a.mu.Lock()
	err := a.err
	a.mu.Unlock()
	if err != nil {
		return err
	}
	for i := range a.rules {
		if err := a.rules[i].agg.Err(); err != nil {
			return fmt.Errorf("%s:%d: aggregate rule for cell %q: %w", a.file, a.rules[i].line, a.rules[i].text, err)
		}
	}
	return nil
}
