package hfilewriter

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Tag types HBase assigns (org.apache.hadoop.hbase.TagType).
const (
	TagTypeACL                        byte = 1
	TagTypeVisibility                 byte = 2 // VISIBILITY_TAG_TYPE: one AND-clause of label ordinals
	TagTypeVisibilitySerialization    byte = 4 // VISIBILITY_EXP_SERIALIZATION_FORMAT_TAG_TYPE
	TagTypeStringVisibility           byte = 7 // STRING_VIS_TAG_TYPE (replication)
	TagTypeTTL                        byte = 8 // TTL_TAG_TYPE: Bytes.toBytes(long ms)
	VisibilitySortedOrdinalFormat     byte = 1 // VisibilityConstants.SORTED_ORDINAL_SERIALIZATION_FORMAT_TAG_VAL
	maxTagValueLen                         = 0xFFFF - 1
	visibilityTagsCapacityHintPerExpr      = 16
)

// Tag is one decoded cell tag.
type Tag struct {
	Type  byte
	Value []byte
}

// AppendTag appends one serialized tag as HBase's ArrayBackedTag stores it: uint16 big-endian
// length (1 + len(value)), the type byte, then the value.
func AppendTag(dst []byte, typ byte, value []byte) ([]byte, error) {
	if len(value) > maxTagValueLen {
		return dst, fmt.Errorf("tag value of %d bytes exceeds HBase's limit of %d", len(value), maxTagValueLen)
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(1+len(value)))
	dst = append(dst, typ)
	return append(dst, value...), nil
}

// TTLTag returns the serialized TTL tag for a TTL in milliseconds, as ImportTsv/TextSortReducer
// build it: new ArrayBackedTag(TagType.TTL_TAG_TYPE, Bytes.toBytes(ttl)) — type 8 with the
// 8-byte big-endian long: 00 09 08 <8 bytes>.
func TTLTag(ms int64) []byte {
	b, _ := AppendTag(make([]byte, 0, 11), TagTypeTTL, binary.BigEndian.AppendUint64(nil, uint64(ms)))
	return b
}

// SplitTags decodes serialized tags ((uint16 len | type | value)*). Values alias tags.
func SplitTags(tags []byte) ([]Tag, error) {
	var out []Tag
	for pos := 0; pos < len(tags); {
		if len(tags)-pos < 3 {
			return nil, fmt.Errorf("truncated tag at byte %d of %d", pos, len(tags))
		}
		n := int(binary.BigEndian.Uint16(tags[pos:]))
		if n < 1 || pos+2+n > len(tags) {
			return nil, fmt.Errorf("tag at byte %d claims %d bytes, %d left", pos, n, len(tags)-pos-2)
		}
		out = append(out, Tag{Type: tags[pos+2], Value: tags[pos+3 : pos+2+n]})
		pos += 2 + n
	}
	return out, nil
}

// checkTags checks that tags is a well-formed tag list without allocating: HBase iterates a cell's
// tags (TTL, visibility) and would fail on a malformed list, so the writer refuses one.
func checkTags(tags []byte) error {
	for pos := 0; pos < len(tags); {
		if len(tags)-pos < 3 {
			return fmt.Errorf("malformed tags: %d stray bytes at offset %d", len(tags)-pos, pos)
		}
		n := int(binary.BigEndian.Uint16(tags[pos:]))
		if n < 1 || pos+2+n > len(tags) {
			return fmt.Errorf("malformed tags: tag at offset %d claims %d bytes, %d left", pos, n, len(tags)-pos-2)
		}
		pos += 2 + n
	}
	return nil
}

// VisibilityTags returns the serialized tags HBase stores for a cell visibility expression, exactly
// as VisibilityUtils.createVisibilityExpTags(expr, withSerializationFormat=true, checkAuths=false, ...)
// does for bulk loads (ImportTsv's TextSortReducer via DefaultVisibilityExpressionResolver): the
// serialization-format tag (type 4, value 01), then the expression parsed by ExpressionParser,
// expanded by ExpressionExpander to an OR of AND-clauses, and one type-2 tag per clause holding its
// label ordinals sorted ascending (a NOT label as the negated ordinal) as protobuf raw varint32s.
//
// labels maps label → ordinal, i.e. the contents of hbase:labels (row = ordinal, f:"" = label):
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
	out, _ := AppendTag(make([]byte, 0, visibilityTagsCapacityHintPerExpr), TagTypeVisibilitySerialization, []byte{VisibilitySortedOrdinalFormat})
	clause := func(n *visNode) error {
		var ords []int
		if err := visOrdinals(n, labels, &ords); err != nil {
			return err
		}
		sortInts(ords)
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

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
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
// Bytes.toBytes(int ordinal) with the label in column f: (scan 'hbase:labels' shows both).
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

// ParseTags turns the tags column of the cell text format into serialized tags. Items are
// separated by commas (outside double quotes) and serialized in the order given:
//
//	ttl=MS               a TTL tag (TTLTag)
//	visibility=EXPR      the tags of a visibility expression (VisibilityTags; needs labels)
//	vis=O&O...           one raw visibility tag from label ordinals (!O = NOT), as FormatTags prints
//	visfmt=N             the visibility serialization-format tag with value N
//	tagT=0xHEX           any tag: type T (0-255), value in hex
//
// ImportTsv puts visibility tags before the TTL tag; write them in that order to get its bytes.
// The empty string means no tags.
func ParseTags(text string, labels map[string]int) ([]byte, error) {
	var out []byte
	for _, item := range splitTagItems(text) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, val, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("tag %q: want name=value", item)
		}
		name = strings.TrimSpace(name)
		var err error
		switch {
		case name == "ttl":
			ms, perr := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if perr != nil {
				return nil, fmt.Errorf("tag %q: ttl must be milliseconds: %w", item, perr)
			}
			out = append(out, TTLTag(ms)...)
		case name == "visibility":
			v, verr := VisibilityTags(val, labels)
			if verr != nil {
				return nil, verr
			}
			out = append(out, v...)
		case name == "vis":
			var v []byte
			for _, s := range strings.Split(val, "&") {
				s = strings.TrimSpace(s)
				neg := strings.HasPrefix(s, "!")
				o, perr := strconv.ParseInt(strings.TrimPrefix(s, "!"), 10, 32)
				if perr != nil || o <= 0 {
					return nil, fmt.Errorf("tag %q: ordinals must be positive int32s, optionally with !", item)
				}
				if neg {
					o = -o
				}
				v = binary.AppendUvarint(v, uint64(uint32(int32(o))))
			}
			out, err = AppendTag(out, TagTypeVisibility, v)
		case name == "visfmt":
			n, perr := strconv.ParseUint(strings.TrimSpace(val), 10, 8)
			if perr != nil {
				return nil, fmt.Errorf("tag %q: %w", item, perr)
			}
			out, err = AppendTag(out, TagTypeVisibilitySerialization, []byte{byte(n)})
		case strings.HasPrefix(name, "tag"):
			t, perr := strconv.ParseUint(name[3:], 10, 8)
			if perr != nil {
				return nil, fmt.Errorf("tag %q: type must be 0-255", item)
			}
			h := strings.TrimPrefix(strings.TrimSpace(val), "0x")
			v, herr := hex.DecodeString(h)
			if herr != nil {
				return nil, fmt.Errorf("tag %q: value must be 0x<hex>: %w", item, herr)
			}
			out, err = AppendTag(out, byte(t), v)
		default:
			return nil, fmt.Errorf("tag %q: unknown tag name %q (want ttl, visibility, vis, visfmt or tagN)", item, name)
		}
		if err != nil {
			return nil, fmt.Errorf("tag %q: %w", item, err)
		}
	}
	if len(out) > MaxTagsLength {
		return nil, fmt.Errorf("tags of %d bytes exceed HBase's limit of %d", len(out), MaxTagsLength)
	}
	return out, nil
}

// splitTagItems splits on commas that are not inside double quotes (quoted visibility labels may
// contain commas; \" and \\ escape inside quotes as in ExpressionParser).
func splitTagItems(s string) []string {
	var items []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if quoted {
				i++
			}
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				items = append(items, s[start:i])
				start = i + 1
			}
		}
	}
	return append(items, s[start:])
}

// FormatTags formats serialized tags for the cell text format so that ParseTags(FormatTags(t), nil)
// returns t: ttl=MS for an 8-byte TTL tag, visfmt=N and vis=O&!O for visibility tags (label names are
// not stored in HFiles, only ordinals), tagT=0xHEX for anything else. Malformed tags are printed as
// one raw item "tags=0xHEX" that ParseTags rejects.
func FormatTags(tags []byte) string { return FormatTagsLabels(tags, nil) }

// FormatTagsLabels is FormatTags that prints a serialization-format tag followed by visibility tags
// as one visibility=EXPR item (clauses joined by |, labels of a clause by &) when labels (label →
// ordinal, as for ParseTags) names every ordinal; ParseTags(text, labels) then rebuilds the same
// bytes, because HBase's parser and expander keep such an expression's clauses in order.
func FormatTagsLabels(tags []byte, labels map[string]int) string {
	if len(tags) == 0 {
		return ""
	}
	list, err := SplitTags(tags)
	if err != nil {
		return "tags=0x" + hex.EncodeToString(tags)
	}
	var names map[int]string
	if len(labels) > 0 {
		names = make(map[int]string, len(labels))
		for l, o := range labels {
			names[o] = l
		}
	}
	var sb strings.Builder
	for i := 0; i < len(list); i++ {
		t := list[i]
		if i > 0 {
			sb.WriteByte(',')
		}
		if names != nil && t.Type == TagTypeVisibilitySerialization && len(t.Value) == 1 && t.Value[0] == VisibilitySortedOrdinalFormat {
			if expr, n := formatVisExpr(list[i+1:], names); n > 0 {
				sb.WriteString("visibility=")
				sb.WriteString(expr)
				i += n
				continue
			}
		}
		switch {
		case t.Type == TagTypeTTL && len(t.Value) == 8:
			fmt.Fprintf(&sb, "ttl=%d", int64(binary.BigEndian.Uint64(t.Value)))
		case t.Type == TagTypeVisibilitySerialization && len(t.Value) == 1:
			fmt.Fprintf(&sb, "visfmt=%d", t.Value[0])
		case t.Type == TagTypeVisibility && formatVisOrdinals(&sb, t.Value):
		default:
			fmt.Fprintf(&sb, "tag%d=0x%s", t.Type, hex.EncodeToString(t.Value))
		}
	}
	return sb.String()
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

// formatVisOrdinals writes vis=... if v is a canonical list of non-zero varint32 ordinals.
func formatVisOrdinals(sb *strings.Builder, v []byte) bool {
	ords, ok := parseVisOrdinals(v)
	if !ok {
		return false
	}
	sb.WriteString("vis=")
	for i, o := range ords {
		if i > 0 {
			sb.WriteByte('&')
		}
		if o < 0 {
			fmt.Fprintf(sb, "!%d", -int64(o))
		} else {
			fmt.Fprintf(sb, "%d", o)
		}
	}
	return true
}
