package kv

import (
	"encoding/binary"
	"fmt"
	"strings"
)

const hexDigits = "0123456789ABCDEF"

// ToStringBinary formats b as HBase's Bytes.toStringBinary does: printable ASCII other than
// backslash as itself ("0-9A-Za-z" and the characters in ` !"#$%&'()*+,-./:;<=>?@[]^_{|}~` and
// backtick), every other byte as \xNN with upper-case hex.
func ToStringBinary(b []byte) string {
	plain := true
	for _, c := range b {
		if c < ' ' || c > '~' || c == '\\' {
			plain = false
			break
		}
	}
	if plain { // the common key: itself (one allocation, no per-byte builder calls)
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for _, c := range b {
		if c >= ' ' && c <= '~' && c != '\\' {
			sb.WriteByte(c)
		} else {
			sb.WriteString(`\x`)
			sb.WriteByte(hexDigits[c>>4])
			sb.WriteByte(hexDigits[c&15])
		}
	}
	return sb.String()
}

// AppendStringBinary appends ToStringBinary(b) to dst.
func AppendStringBinary(dst, b []byte) []byte { return appendStringBinary(dst, b) }

// appendStringBinary appends ToStringBinary(b) to dst.
func appendStringBinary(dst, b []byte) []byte {
	i := 0 // the bytes that are themselves, up to the first one that is not, in one append
	if len(b) >= 8 {
		i = plainPrefix(b)
	} else {
		for i < len(b) && b[i] >= ' ' && b[i] <= '~' && b[i] != '\\' { // a family or qualifier
			i++
		}
	}
	dst = append(dst, b[:i]...)
	for _, c := range b[i:] {
		if c >= ' ' && c <= '~' && c != '\\' {
			dst = append(dst, c)
		} else {
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return dst
}

// FromStringBinary parses the output of ToStringBinary (HBase's Bytes.toBytesBinary): \xNN (either hex
// case) is one byte, everything else is taken literally. Unlike HBase, a malformed escape is an error,
// not silently kept.
func FromStringBinary(s string) ([]byte, error) {
	if strings.IndexByte(s, '\\') < 0 { // no escape: every byte as it is (a split file's usual key)
		return []byte(s), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && s[i+1] == 'x' {
			if i+3 >= len(s) {
				return nil, fmt.Errorf("truncated \\x escape at offset %d in %q", i, s)
			}
			hi, ok1 := Unhex(s[i+2])
			lo, ok2 := Unhex(s[i+3])
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("bad \\x escape %q at offset %d", s[i:i+4], i)
			}
			out = append(out, hi<<4|lo)
			i += 3
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// Unhex returns the value of one hexadecimal digit (either case) and whether c is one.
func Unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// SWAR constants: a byte's value in every byte of a word, and each byte's top bit.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainPrefix returns how many bytes at the start of b ToStringBinary keeps as themselves (printable
// ASCII other than backslash), eight at a time while a word holds none of the others: a key's
// formatted text (every file's bounds and first and last keys) costs a few instructions a word, not
// a few a byte.
func plainPrefix(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if !plainWord(binary.LittleEndian.Uint64(b[i:])) {
			break
		}
	}
	if i < len(b) && len(b) >= 8 && i+8 > len(b) && plainWord(binary.LittleEndian.Uint64(b[len(b)-8:])) {
		return len(b) // the last eight bytes, over the ones checked already
	}
	for i < len(b) && b[i] >= ' ' && b[i] <= '~' && b[i] != '\\' {
		i++
	}
	return i
}

// plainWord reports whether every byte of x is in [' ', '~'] and not a backslash: the SWAR tests
// (Bit Twiddling Hacks' hasless, hasmore, haszero) are exact as a yes/no for the word. A borrow or
// carry that crosses into the next byte starts only at a byte the test flags already.
func plainWord(x uint64) bool {
	below := (x - ' '*ones) & ^x      // top bit set for a byte < ' '
	above := (x + (127-'~')*ones) | x // top bit set for a byte > '~'
	y := x ^ '\\'*ones                // a backslash is a zero byte of y
	bs := (y - ones) & ^y             // top bit set for a zero byte of y
	return (below|above|bs)&highs == 0
}
