package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// Type is the KeyValue type code stored as the last byte of a key (HBase KeyValue.Type).
type Type byte

// HBase KeyValue type codes. Minimum and Maximum are search sentinels and never stored as real cells
// (Maximum appears in synthetic index and bloom keys).
const (
	TypeMinimum             Type = 0
	TypePut                 Type = 4
	TypeDelete              Type = 8
	TypeDeleteFamilyVersion Type = 10
	TypeDeleteColumn        Type = 12
	TypeDeleteFamily        Type = 14
	TypeMaximum             Type = 255
)

// LatestTimestamp is HConstants.LATEST_TIMESTAMP (Long.MAX_VALUE).
const LatestTimestamp int64 = 0x7FFFFFFFFFFFFFFF

// Size limits of the KeyValue format.
const (
	MaxRowLength    = 32767 // Short.MAX_VALUE
	MaxFamilyLength = 127   // Byte.MAX_VALUE
	MaxTagsLength   = 65535
	// KeyInfrastructureSize is rowLength(2) + familyLength(1) + timestamp(8) + type(1).
	KeyInfrastructureSize = 12
)

// String returns the HBase name of the type (Put, Delete, ...).
func (t Type) String() string {
	switch t {
	case TypeMinimum:
		return "Minimum"
	case TypePut:
		return "Put"
	case TypeDelete:
		return "Delete"
	case TypeDeleteFamilyVersion:
		return "DeleteFamilyVersion"
	case TypeDeleteColumn:
		return "DeleteColumn"
	case TypeDeleteFamily:
		return "DeleteFamily"
	case TypeMaximum:
		return "Maximum"
	}
	return fmt.Sprintf("Type(%d)", byte(t))
}

// ParseType maps an HBase type name to its code. Only storable types are accepted.
func ParseType(s string) (Type, error) {
	switch s {
	case "Put":
		return TypePut, nil
	case "Delete":
		return TypeDelete, nil
	case "DeleteFamilyVersion":
		return TypeDeleteFamilyVersion, nil
	case "DeleteColumn":
		return TypeDeleteColumn, nil
	case "DeleteFamily":
		return TypeDeleteFamily, nil
	}
	return 0, fmt.Errorf("unknown cell type %q (want Put, Delete, DeleteColumn, DeleteFamily or DeleteFamilyVersion)", s)
}

// Cell is one HBase cell. It is the convenience form used by tests, the CLI and the reader;
// the hot path (Writer.AppendParts) takes a cell's parts and never builds Cells.
type Cell struct {
	Row       []byte
	Family    []byte
	Qualifier []byte
	Timestamp int64
	Type      Type
	Value     []byte
	Tags      []byte // serialized tags (uint16 len, uint8 type, value)*; v3 only
	SeqID     uint64 // memstore timestamp / sequence id; 0 for bulk-load files
}

// QualifierValue is a cell's qualifier and value, for the cells of a row that share everything else
// (hfilewriter.SameRowCell; cellrec's Dict.AppendUntagged decodes a record's cells into them).
type QualifierValue struct {
	Qualifier, Value []byte
}

// KeyLen is the length of the cell's flat key.
func (c *Cell) KeyLen() int {
	return KeyInfrastructureSize + len(c.Row) + len(c.Family) + len(c.Qualifier)
}

// Key returns the cell's flat key (a fresh slice).
func (c *Cell) Key() []byte {
	return AppendKey(make([]byte, 0, c.KeyLen()), c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type)
}

// Validate checks the format's size limits.
func (c *Cell) Validate() error { return ValidateSizes(c.Row, c.Family, c.Tags) }

// ValidateSizes checks a cell's row, family and tags against the format's size limits.
func ValidateSizes(row, family, tags []byte) error {
	if len(row) > MaxRowLength {
		return fmt.Errorf("row of %d bytes exceeds HBase's limit of %d", len(row), MaxRowLength)
	}
	if len(family) > MaxFamilyLength {
		return fmt.Errorf("family of %d bytes exceeds HBase's limit of %d", len(family), MaxFamilyLength)
	}
	if len(tags) > MaxTagsLength {
		return fmt.Errorf("tags of %d bytes exceed HBase's limit of %d", len(tags), MaxTagsLength)
	}
	return nil
}

// String formats the cell like HBase's KeyValue.toString: row/family:qualifier/ts/type/vlen=N/seqid=S.
func (c *Cell) String() string {
	return FormatCell(c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, len(c.Value), c.SeqID)
}

// FormatCell formats a cell given by its parts as Cell.String does.
func FormatCell(row, family, qualifier []byte, ts int64, typ Type, valueLen int, seq uint64) string {
	return fmt.Sprintf("%s/%s:%s/%d/%s/vlen=%d/seqid=%d", ToStringBinary(row), ToStringBinary(family),
		ToStringBinary(qualifier), ts, typ, valueLen, seq)
}

// AppendKey appends the flat KeyValue key (§2.1 of the format spec) to dst:
// int16 rowLen | row | int8 famLen | family | qualifier | int64 ts | int8 type.
func AppendKey(dst, row, family, qualifier []byte, ts int64, typ Type) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(row)))
	dst = append(dst, row...)
	dst = append(dst, byte(len(family)))
	dst = append(dst, family...)
	dst = append(dst, qualifier...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(ts))
	return append(dst, byte(typ))
}

// AppendKeyValue appends a KeyValue record without tags or mvcc: int32 keyLen | int32 valueLen | key | value.
// This is the form cells take in the sorter's arena and spill files.
func AppendKeyValue(dst, row, family, qualifier []byte, ts int64, typ Type, value []byte) []byte {
	klen := KeyInfrastructureSize + len(row) + len(family) + len(qualifier)
	dst = binary.BigEndian.AppendUint32(dst, uint32(klen))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(value)))
	dst = AppendKey(dst, row, family, qualifier, ts, typ)
	return append(dst, value...)
}

// AppendKeyValueTags appends a KeyValue record with tags and without mvcc, as HBase's KeyValue lays one
// out: int32 keyLen | int32 valueLen | key | value | int16 tagsLen | tags.
func AppendKeyValueTags(dst, row, family, qualifier []byte, ts int64, typ Type, value, tags []byte) []byte {
	dst = AppendKeyValue(dst, row, family, qualifier, ts, typ, value)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(tags)))
	return append(dst, tags...)
}

// AppendCellKeyValue appends c as a KeyValue record (no tags, no mvcc).
func AppendCellKeyValue(dst []byte, c *Cell) []byte {
	return AppendKeyValue(dst, c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value)
}

var errShortKV = errors.New("truncated KeyValue record")

// SplitKeyValue splits a KeyValue record (int32 keyLen | int32 valueLen | key | value) into its key and
// value and returns the total record length consumed.
func SplitKeyValue(kv []byte) (key, value []byte, n int, err error) {
	if len(kv) < 8 {
		return nil, nil, 0, errShortKV
	}
	klen := int(binary.BigEndian.Uint32(kv))
	vlen := int(binary.BigEndian.Uint32(kv[4:]))
	if klen < KeyInfrastructureSize || klen > len(kv)-8 || vlen < 0 || vlen > len(kv)-8-klen {
		return nil, nil, 0, errShortKV
	}
	return kv[8 : 8+klen], kv[8+klen : 8+klen+vlen], 8 + klen + vlen, nil
}

// KVKey returns the key of a well-formed KeyValue record (no bounds checks beyond Go's).
func KVKey(kv []byte) []byte {
	klen := binary.BigEndian.Uint32(kv)
	return kv[8 : 8+klen]
}

// KVValue returns the value of a well-formed KeyValue record.
func KVValue(kv []byte) []byte {
	klen := binary.BigEndian.Uint32(kv)
	vlen := binary.BigEndian.Uint32(kv[4:])
	return kv[8+klen : 8+klen+vlen]
}

// Key is a view of a flat key with accessors for its fields. It does not copy.
type Key []byte

// Row returns the row bytes.
func (k Key) Row() []byte { rl := int(binary.BigEndian.Uint16(k)); return k[2 : 2+rl] }

// Family returns the family bytes.
func (k Key) Family() []byte {
	rl := int(binary.BigEndian.Uint16(k))
	fl := int(k[2+rl])
	return k[3+rl : 3+rl+fl]
}

// Qualifier returns the qualifier bytes.
func (k Key) Qualifier() []byte {
	rl := int(binary.BigEndian.Uint16(k))
	fl := int(k[2+rl])
	return k[3+rl+fl : len(k)-9]
}

// Timestamp returns the timestamp.
func (k Key) Timestamp() int64 { return int64(binary.BigEndian.Uint64(k[len(k)-9:])) }

// Type returns the type code.
func (k Key) Type() Type { return Type(k[len(k)-1]) }

// Valid reports whether k is long enough and its internal lengths are consistent.
func (k Key) Valid() bool {
	if len(k) < KeyInfrastructureSize {
		return false
	}
	rl := int(binary.BigEndian.Uint16(k))
	if rl > MaxRowLength || 2+rl+1 > len(k)-9 {
		return false
	}
	fl := int(k[2+rl])
	return 3+rl+fl <= len(k)-9
}

// String formats the key as HBase does: row/family:qualifier/timestamp/type.
func (k Key) String() string {
	if !k.Valid() {
		return fmt.Sprintf("<invalid key %s>", ToStringBinary(k))
	}
	return FormatKey(k.Row(), k.Family(), k.Qualifier(), k.Timestamp(), k.Type())
}

// FormatKey formats a key given by its parts as Key.String does. It is called for every HFile's first
// and last key (FileResult, the manifest): one buffer, no fmt.
func FormatKey(row, family, qualifier []byte, ts int64, typ Type) string {
	return string(AppendFormatKey(make([]byte, 0, len(row)+len(family)+len(qualifier)+40), row, family, qualifier, ts, typ))
}

// AppendFormatKey appends FormatKey(row, family, qualifier, ts, typ) to dst.
func AppendFormatKey(dst, row, family, qualifier []byte, ts int64, typ Type) []byte {
	return AppendFormatKeyAfterRow(appendStringBinary(dst, row), family, qualifier, ts, typ)
}

// AppendTimestamp appends ts as AppendFormatKey writes it: LATEST_TIMESTAMP, or its decimal digits.
func AppendTimestamp(dst []byte, ts int64) []byte {
	if ts == LatestTimestamp {
		return append(dst, "LATEST_TIMESTAMP"...)
	}
	return strconv.AppendInt(dst, ts, 10)
}

// AppendFormatKeyAfterRowText is AppendFormatKeyAfterRow with the timestamp as its text (AppendTimestamp's):
// a caller that formats many keys of one timestamp (every file's first and last key) formats it once.
func AppendFormatKeyAfterRowText(dst, family, qualifier, tsText []byte, typ Type) []byte {
	return appendKeyType(append(appendKeyColumn(dst, family, qualifier), tsText...), typ)
}

// AppendFormatKeyAfterRow appends what AppendFormatKey appends after the row's ToStringBinary.
func AppendFormatKeyAfterRow(dst, family, qualifier []byte, ts int64, typ Type) []byte {
	return appendKeyType(AppendTimestamp(appendKeyColumn(dst, family, qualifier), ts), typ)
}

// appendKeyColumn appends the part of a formatted key between its row and its timestamp: "/family:qualifier/".
func appendKeyColumn(dst, family, qualifier []byte) []byte {
	b := append(dst, '/')
	b = appendStringBinary(b, family)
	b = append(b, ':')
	b = appendStringBinary(b, qualifier)
	return append(b, '/')
}

// appendKeyType appends the part of a formatted key after its timestamp: "/" and the type's name.
func appendKeyType(dst []byte, typ Type) []byte {
	return append(append(dst, '/'), typ.String()...)
}

// CellFromKey fills a Cell from a flat key and a value (sharing their bytes).
func CellFromKey(key, value []byte) Cell {
	k := Key(key)
	return Cell{Row: k.Row(), Family: k.Family(), Qualifier: k.Qualifier(), Timestamp: k.Timestamp(),
		Type: k.Type(), Value: value}
}
