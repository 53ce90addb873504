package kv

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// This file holds cell tags: their serialization (ArrayBackedTag), the TTL tag, and the text form of
// the cell text format's tags column. Visibility tags are in tags_visibility.go.

// Tag types HBase assigns (org.apache.hadoop.hbase.TagType).
const (
	TagTypeACL                     byte = 1
	TagTypeVisibility              byte = 2 // VISIBILITY_TAG_TYPE: one AND-clause of label ordinals
	TagTypeVisibilitySerialization byte = 4 // VISIBILITY_EXP_SERIALIZATION_FORMAT_TAG_TYPE
	TagTypeStringVisibility        byte = 7 // STRING_VIS_TAG_TYPE (replication)
	TagTypeTTL                     byte = 8 // TTL_TAG_TYPE: Bytes.toBytes(long ms)
	VisibilitySortedOrdinalFormat  byte = 1 // VisibilityConstants.SORTED_ORDINAL_SERIALIZATION_FORMAT_TAG_VAL
	maxTagValueLen                      = 0xFFFF - 1
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

// CheckTags checks that tags is a well-formed tag list without allocating: HBase iterates a cell's
// tags (TTL, visibility) and would fail on a malformed list, so the writer refuses one.
func CheckTags(tags []byte) error {
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
