package pipeline

import "bytes"

// appendUnescaped appends f to dst with the escape sequences of rules decoded (escMySQL or
// escPostgres; esc is the escape byte). An escape as the very last byte of f stands for itself.
// It allocates nothing beyond growing dst.
func appendUnescaped(dst, f []byte, esc byte, rules escRules) []byte {
	for {
		i := bytes.IndexByte(f, esc)
		if i < 0 || i+1 >= len(f) {
			return append(dst, f...)
		}
		dst = append(dst, f[:i]...)
		f = f[i+1:]
		if rules == escPostgres {
			c, n := pgUnescape(f)
			dst = append(dst, c)
			f = f[n:]
			continue
		}
		dst = append(dst, mysqlUnescape(f[0]))
		f = f[1:]
	}
}

// mysqlUnescape maps the byte after MySQL's escape character to the byte it stands for (LOAD DATA's
// rules: \0 \b \n \r \t \Z, anything else is itself).
func mysqlUnescape(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'Z':
		return 26
	}
	return c
}

// pgUnescape decodes the escape sequence after a backslash at the start of f (non-empty) as
// PostgreSQL's COPY FROM (TEXT) does (CopyReadAttributesText): \b \f \n \r \t \v, one to three octal
// digits, \x and one or two hex digits; any other byte (\x without a hex digit included) is itself.
// It returns the byte and how many bytes of f the sequence used.
func pgUnescape(f []byte) (byte, int) {
	switch c := f[0]; c {
	case 'b':
		return '\b', 1
	case 'f':
		return '\f', 1
	case 'n':
		return '\n', 1
	case 'r':
		return '\r', 1
	case 't':
		return '\t', 1
	case 'v':
		return '\v', 1
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v, n := int(c-'0'), 1
		for n < 3 && n < len(f) && f[n] >= '0' && f[n] <= '7' {
			v = v<<3 | int(f[n]-'0')
			n++
		}
		return byte(v), n
	case 'x':
		v, n := 0, 1
		for n < 3 && n < len(f) {
			h, ok := hexNibble(f[n])
			if !ok {
				break
			}
			v = v<<4 | h
			n++
		}
		if n == 1 {
			return 'x', 1
		}
		return byte(v), n
	default:
		return c, 1
	}
}

func hexNibble(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

// quotedUnescape handles an escape byte inside a quoted field at data[0] (data[1] exists): it returns
// the byte to append and how many bytes were used. Under escQuoted (PostgreSQL CSV) the escape only
// means something before the quote or itself; elsewhere it is an ordinary byte.
func (s *CSVSource) quotedUnescape(data []byte) (byte, int) {
	c := data[1]
	switch s.escRules {
	case escQuoted:
		if c == s.quote || c == s.esc {
			return c, 2
		}
		return s.esc, 1
	case escPostgres: // only with an explicit quote: one byte, so that no sequence spans a read
		if c == 'x' || c >= '0' && c <= '7' {
			return c, 2
		}
		b, _ := pgUnescape(data[1:2])
		return b, 2
	}
	return mysqlUnescape(c), 2
}
