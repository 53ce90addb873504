package jobs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// filesNull is how encoding/json, indenting by two spaces, writes a nil Files: the one place in a
// manifest's text where the file list goes (a JSON string cannot hold a raw newline, and top-level
// keys are unique).
const filesNull = "\n  \"files\": null"

// Marshal renders the manifest as indented JSON with a trailing newline: exactly encoding/json's
// Encoder with SetIndent("", "  ") and SetEscapeHTML(false). The file list, one entry per HFile
// (10,000 for a table of 10,000 regions), is written by appendFileEntries instead of encoding/json's
// reflection and re-indenting pass, which cost about 17,000 instructions a file; everything else goes
// through encoding/json.
func (m *Manifest) Marshal() ([]byte, error) {
	before, after, err := m.textAround()
	if err != nil {
		return nil, err
	}
	if m.Files == nil {
		return before, nil
	}
	b := make([]byte, 0, len(before)+len(m.Files)*320+len("[\n  ]")+len(after))
	b = append(append(b, before...), '[')
	if b, err = appendFileEntries(b, m.Files, false); err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return append(appendListEnd(b, len(m.Files)), after...), nil
}

// textAround encodes the manifest without its file list: the text before the list and the text after
// it (Marshal's is before, the list, after). Without a list (Files nil) before is the whole text and
// after is nil.
func (m *Manifest) textAround() (before, after []byte, err error) {
	head := *m
	head.Files = nil
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&head); err != nil {
		return nil, nil, fmt.Errorf("encode manifest: %w", err)
	}
	text := buf.Bytes()
	if m.Files == nil {
		return text, nil, nil
	}
	at := bytes.Index(text, []byte(filesNull))
	if at < 0 {
		return nil, nil, fmt.Errorf("encode manifest: no file list in the encoded manifest")
	}
	at += len(filesNull) - len("null")
	return text[:at], text[at+len("null"):], nil
}

// appendListEnd closes a file list of n entries opened with '[' (encoding/json's "[]" when empty).
func appendListEnd(b []byte, n int) []byte {
	if n == 0 {
		return append(b, ']')
	}
	return append(b, "\n  ]"...)
}

// manifestPiece is about how many bytes of a manifest's text writeText encodes before it writes them.
const manifestPiece = 64 << 10

// manifestBatch is how many files' entries writeText encodes between checks of its buffer's length.
const manifestBatch = 64

// writeText writes Marshal's text to w in pieces of about piece bytes, each encoded into the same
// buffer: the commit writes a manifest of 10,000 files (~3 MB) without holding its text, whose fresh
// pages (~800, a hypervisor trap each on this kind of machine) cost more than the encoding.
func (m *Manifest) writeText(w io.Writer, piece int) error {
	before, after, err := m.textAround()
	if err != nil {
		return err
	}
	if m.Files == nil {
		_, err := w.Write(before)
		return err
	}
	b := make([]byte, 0, piece+manifestBatch*320)
	b = append(append(b, before...), '[')
	for i := 0; i < len(m.Files); i += manifestBatch {
		if b, err = appendFileEntries(b, m.Files[i:min(i+manifestBatch, len(m.Files))], i > 0); err != nil {
			return fmt.Errorf("encode manifest: %w", err)
		}
		if len(b) >= piece {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	b = append(appendListEnd(b, len(m.Files)), after...)
	_, err = w.Write(b)
	return err
}

// appendFileEntries appends files' entries as encoding/json writes them in a []OutputFile at depth 1 of
// an object indented by two spaces (fields in OutputFile's order, under their json names), without the
// list's brackets: each entry but the first after a comma, and the first too if more is true (the
// entries of a list's later files).
func appendFileEntries(b []byte, files []OutputFile, more bool) ([]byte, error) {
	var err error
	for i := range files {
		f := &files[i]
		if i > 0 || more {
			b = append(b, ',')
		}
		b = append(b, "\n    {\n      \"family\": "...)
		if b, err = appendJSONString(b, f.Family); err != nil {
			return nil, err
		}
		b = append(b, ",\n      \"path\": "...)
		if b, err = appendJSONString(b, f.Path); err != nil {
			return nil, err
		}
		b = append(b, ",\n      \"region\": "...)
		b = strconv.AppendInt(b, int64(f.Region), 10)
		b = append(b, ",\n      \"region_start\": "...)
		if b, err = appendJSONString(b, f.RegionStart); err != nil {
			return nil, err
		}
		b = append(b, ",\n      \"region_end\": "...)
		if b, err = appendJSONString(b, f.RegionEnd); err != nil {
			return nil, err
		}
		b = append(b, ",\n      \"first_key\": "...)
		if b, err = appendJSONString(b, f.FirstKey); err != nil {
			return nil, err
		}
		b = append(b, ",\n      \"last_key\": "...)
		if b, err = appendJSONString(b, f.LastKey); err != nil {
			return nil, err
		}
		b = append(b, ",\n      \"cells\": "...)
		b = strconv.AppendInt(b, f.Cells, 10)
		b = append(b, ",\n      \"bytes\": "...)
		b = strconv.AppendInt(b, f.Bytes, 10)
		b = append(b, "\n    }"...)
	}
	return b, nil
}

// appendJSONString appends s as a JSON string the way encoding/json does without HTML escaping.
// Printable ASCII (what kv.ToStringBinary makes of every key) is written here, with `"` and `\`
// escaped; a string with any other byte is handed to encoding/json whole.
func appendJSONString(b []byte, s string) ([]byte, error) {
	plain := true
	i := 0
	for ; i+8 <= len(s); i += 8 { // eight bytes at a time while none needs a look
		if !jsonPlainWord(load64(s[i : i+8])) {
			break
		}
	}
	if i < len(s) && len(s) >= 8 && i+8 > len(s) && jsonPlainWord(load64(s[len(s)-8:])) {
		i = len(s) // the last eight bytes, over the ones checked already
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' {
			return appendJSONStringSlow(b, s)
		} else if c == '"' || c == '\\' {
			plain = false
		}
	}
	b = append(b, '"')
	if plain {
		b = append(b, s...)
	} else {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == '"' || c == '\\' {
				b = append(b, '\\', c)
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"'), nil
}

func appendJSONStringSlow(b []byte, s string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// SWAR constants: a byte's value in every byte of a word, and each byte's top bit.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// jsonPlainWord reports whether each of the eight bytes of x is printable ASCII other than `"` and
// `\`: what appendJSONString writes as itself. The SWAR tests (Bit Twiddling Hacks' hasless,
// hasmore, haszero) are exact as a yes/no for the word: a borrow or carry that crosses into the
// next byte starts only at a byte the test flags already.
func jsonPlainWord(x uint64) bool {
	below := (x - ' '*swarOnes) & ^x      // top bit set for a byte < ' '
	above := (x + (127-'~')*swarOnes) | x // top bit set for a byte > '~'
	q := x ^ '"'*swarOnes                 // a quote is a zero byte of q
	bs := x ^ '\\'*swarOnes               // a backslash is a zero byte of bs
	zeros := (q-swarOnes)&^q | (bs-swarOnes)&^bs
	return (below|above|zeros)&swarHighs == 0
}

// load64 is the first eight bytes of s as a little-endian word (one load: the compiler combines them).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
