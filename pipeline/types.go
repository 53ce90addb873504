package pipeline

import (
	"fmt"
	"strings"
)

// Type is how a column's value is read from the input and encoded into HBase bytes (cell values, row-key
// parts, qualifier parts). The encodings are those of HBase's org.apache.hadoop.hbase.util.Bytes, so that
// Java clients read the cells back with Bytes.toLong, Bytes.toDouble, ...
type Type uint8

// Types. See docs/mapping.md for the full table.
const (
	TypeString    Type = iota // UTF-8 text, validated; written as its bytes
	TypeBytes                 // any bytes, written as they are (ImportTsv's behaviour)
	TypeLong                  // decimal integer → 8 bytes big-endian two's complement (Bytes.toBytes(long))
	TypeInt                   // → 4 bytes (Bytes.toBytes(int))
	TypeShort                 // → 2 bytes (Bytes.toBytes(short))
	TypeDouble                // → 8 bytes IEEE 754 big-endian (Bytes.toBytes(double))
	TypeFloat                 // → 4 bytes (Bytes.toBytes(float))
	TypeBoolean               // true/false/1/0 → 0xFF / 0x00 (Bytes.toBytes(boolean))
	TypeHex                   // hex text → the decoded bytes
	TypeBase64                // standard base64 text (padding optional) → the decoded bytes
	TypeDecimal               // a decimal number, validated, written as its text
	TypeTimestamp             // a point in time (format/timezone of the column) → 8-byte big-endian epoch millis
)

var typeNames = [...]string{
	TypeString:    "string",
	TypeBytes:     "bytes",
	TypeLong:      "long",
	TypeInt:       "int",
	TypeShort:     "short",
	TypeDouble:    "double",
	TypeFloat:     "float",
	TypeBoolean:   "boolean",
	TypeHex:       "hex",
	TypeBase64:    "base64",
	TypeDecimal:   "decimal",
	TypeTimestamp: "timestamp",
}

// String returns the type's name as written in a mapping.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// ParseType maps a type name (case-insensitive; "" = string) to a Type.
func ParseType(s string) (Type, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "string", "text":
		return TypeString, nil
	case "bool":
		return TypeBoolean, nil
	case "integer":
		return TypeInt, nil
	}
	for i, n := range typeNames {
		if strings.EqualFold(s, n) {
			return Type(i), nil
		}
	}
	return 0, fmt.Errorf("unknown type %q (want one of %s)", s, strings.Join(typeNames[:], ", "))
}
