package kv

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file holds cell visibility tags: building them from an expression and a label map as HBase
// does for bulk loads, and printing them back as an expression.

// VisibilityTags returns the serialized tags HBase stores for a cell visibility expression, exactly
// as VisibilityUtils.createVisibilityExpTags(expr, withSerializationFormat=true, checkAuths=false, ...)
// does for bulk loads (ImportTsv's TextSortReducer via DefaultVisibilityExpressionResolver): the
// serialization-format tag (type 4, value 01), then the expression parsed by ExpressionParser,
// expanded by ExpressionExpander to an OR of AND-clauses, and one type-2 tag per clause holding its
// label ordinals sorted ascending (a NOT label as the negated ordinal) as protobuf raw varint32s.
//
// labels maps label → ordinal, i.e. the contents of hbase:labels (row = int ordinal, column f:\x00 = label):
// HBase resolves labels on the cluster, and an offline writer cannot, so the caller supplies them
// (see ReadVisibilityLabels). An unknown label is an error.
func VisibilityTags(expr string, labels map[string]int) ([]byte, error) {
	node, err := visParse(expr)
	if err != nil {
		return nil, fmt.Errorf("visibility expression %q: %w", expr, err)
	}
	if pos, _ := visClauseBound(node); pos > MaxTagsLength/3 {
		return nil, fmt.Errorf("visibility expression %q: too complex (expands to more clauses than a cell's %d bytes of tags can hold)", expr, MaxTagsLength)
	}
	node = visExpand(node)
	out, _ := AppendTag(nil, TagTypeVisibilitySerialization, []byte{VisibilitySortedOrdinalFormat})
	clause := func(n *visNode) error {
		var ords []int
		if err := visOrdinals(n, labels, &ords); err != nil {
			return err
		}
		slices.Sort(ords)
		var v []byte
		for _, o := range ords {
			v = binary.AppendUvarint(v, uint64(uint32(int32(o)))) // StreamUtils.writeRawVInt32
		}
		out, err = AppendTag(out, TagTypeVisibility, v)
		return err
	}
	if node.single() || node.op != visOr {
		err = clause(node)
	} else {
		for _, c := range node.children {
			if err = clause(c); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("visibility expression %q: %w", expr, err)
	}
	return out, nil
}

// visOrdinals is VisibilityUtils.getLabelOrdinals.
func visOrdinals(n *visNode, labels map[string]int, ords *[]int) error {
	if n.single() {
		id := n.label
		neg := false
		if n.op == visNot {
			if len(n.children) != 1 {
				return errors.New("NOT without an operand")
			}
			c := n.children[0]
			if c.op != visLeaf {
				return errors.New("a NOT applied to a sub-expression inside an AND clause cannot be stored (HBase fails on it too)")
			}
			id, neg = c.label, true
		}
		o, ok := labels[id]
		if !ok {
			if len(labels) == 0 {
				return fmt.Errorf("label %q is not in the label map (hbase:labels): no label map was given (hfload: --labels FILE)", id)
			}
			return fmt.Errorf("label %q is not in the label map (hbase:labels)", id)
		}
		if o <= 0 || o > math.MaxInt32 {
			return fmt.Errorf("label %q has invalid ordinal %d", id, o)
		}
		if neg {
			o = -o
		}
		*ords = append(*ords, o)
		return nil
	}
	for _, c := range n.children {
		if err := visOrdinals(c, labels, ords); err != nil {
			return err
		}
	}
	return nil
}

// ReadVisibilityLabels reads a label → ordinal map, one "label=ordinal" per line (blank lines and
// lines starting with # ignored). It is the offline copy of hbase:labels, whose rows are
// Bytes.toBytes(int ordinal) with the label in column f:\x00 (scan 'hbase:labels' shows both).
func ReadVisibilityLabels(r io.Reader) (map[string]int, error) {
	labels := map[string]int{}
	byOrdinal := map[int]string{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, '=')
		if i <= 0 {
			return nil, fmt.Errorf("line %d: want label=ordinal, got %q", n, line)
		}
		label := strings.TrimSpace(line[:i])
		o, err := strconv.Atoi(strings.TrimSpace(line[i+1:]))
		if err != nil || o <= 0 || o > math.MaxInt32 {
			return nil, fmt.Errorf("line %d: ordinal %q is not a positive int32", n, line[i+1:])
		}
		if prev, dup := labels[label]; dup {
			return nil, fmt.Errorf("line %d: label %q given twice (%d and %d)", n, label, prev, o)
		}
		if prev, dup := byOrdinal[o]; dup {
			return nil, fmt.Errorf("line %d: ordinal %d given to both %q and %q", n, o, prev, label)
		}
		labels[label] = o
		byOrdinal[o] = label
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading labels: %w", err)
	}
	return labels, nil
}

// formatVisExpr turns the visibility tags at the start of list into an expression over label names;
// n is the number of tags used (0 if the first tag is not a visibility tag or an ordinal has no name).
func formatVisExpr(list []Tag, names map[int]string) (expr string, n int) {
	var clauses []string
	for _, t := range list {
		if t.Type != TagTypeVisibility {
			break
		}
		ords, ok := parseVisOrdinals(t.Value)
		if !ok {
			return "", 0
		}
		parts := make([]string, len(ords))
		for i, o := range ords {
			neg := o < 0
			if neg {
				o = -o
			}
			name, ok := names[int(o)]
			if !ok || name == "" || strings.TrimSpace(name) != name {
				return "", 0
			}
			parts[i] = quoteVisLabel(name)
			if neg {
				parts[i] = "!" + parts[i]
			}
		}
		c := strings.Join(parts, "&")
		if len(parts) > 1 {
			c = "(" + c + ")"
		}
		clauses = append(clauses, c)
	}
	return strings.Join(clauses, "|"), len(clauses)
}

// quoteVisLabel returns the label as ExpressionParser reads it: bare if every byte is a valid label
// character, else in double quotes with \ and \" escaped.
func quoteVisLabel(l string) string {
	for i := 0; i < len(l); i++ {
		if !visValidAuthChar(l[i]) {
			return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(l) + `"`
		}
	}
	return l
}

// parseVisOrdinals decodes a canonical, non-empty list of non-zero varint32 ordinals.
func parseVisOrdinals(v []byte) ([]int32, bool) {
	var ords []int32
	for p := 0; p < len(v); {
		u, n := binary.Uvarint(v[p:])
		if n <= 0 || u > math.MaxUint32 || u == 0 || n != len(binary.AppendUvarint(nil, u)) {
			return nil, false
		}
		ords = append(ords, int32(uint32(u)))
		p += n
	}
	return ords, len(ords) > 0
}
