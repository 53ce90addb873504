package partition

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/hfload/hfload/hfilewriter"
)

// ParseSplits reads split points, one per line, in HBase's Bytes.toStringBinary notation (\xNN is one
// byte, everything else literal) — the format of the HBase shell's SPLITS_FILE and of WriteText.
//
// Lines are trimmed of surrounding white space (as the shell does); blank lines and lines starting
// with '#' are skipped (write a key starting with '#' as \x23). To accept keys pasted from a shell
// command such as `create 't', 'd', SPLITS => ['a', '\x01b']`, a line may instead hold one or more
// quoted keys separated by commas, optionally wrapped in [ ] and followed by a comma. Inside single
// quotes \' and \\ are Ruby escapes; inside double quotes \" and \\ are. In both, \xNN is then decoded
// as toStringBinary (HBase's shell passes every split string through Bytes.toBytesBinary). An unquoted
// line is the key verbatim, commas included.
//
// The keys must be non-empty, sorted and unique; errors name the offending line numbers.
func ParseSplits(r io.Reader) (Splits, error) {
	var out Splits
	var lines []int // line number of each key, for error messages
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*hfilewriter.MaxRowLength+1024)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		texts, err := lineKeys(line)
		if err != nil {
			return nil, fmt.Errorf("split points line %d: %w", lineNo, err)
		}
		for _, t := range texts {
			k, err := hfilewriter.FromStringBinary(t)
			if err != nil {
				return nil, fmt.Errorf("split points line %d: %w", lineNo, err)
			}
			if len(k) == 0 {
				return nil, fmt.Errorf("split points line %d: empty key (the empty key is the table start, not a split point)", lineNo)
			}
			if len(k) > hfilewriter.MaxRowLength {
				return nil, fmt.Errorf("split points line %d: key of %d bytes exceeds HBase's row limit %d", lineNo, len(k), hfilewriter.MaxRowLength)
			}
			if n := len(out); n > 0 {
				switch c := bytes.Compare(out[n-1], k); {
				case c == 0:
					return nil, fmt.Errorf("split points line %d: duplicate key %q (also on line %d)", lineNo, t, lines[n-1])
				case c > 0:
					return nil, fmt.Errorf("split points line %d: key %q sorts before %q on line %d; split points must be sorted",
						lineNo, t, hfilewriter.ToStringBinary(out[n-1]), lines[n-1])
				}
			}
			out = append(out, k)
			lines = append(lines, lineNo)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading split points after line %d: %w", lineNo, err)
	}
	return out, nil
}

// lineKeys returns the toStringBinary texts on one trimmed, non-comment line.
func lineKeys(line string) ([]string, error) {
	s := line
	if strings.HasPrefix(s, "[") {
		s = strings.TrimSpace(s[1:])
	}
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		if s != line {
			return nil, fmt.Errorf("expected a quoted key after '[' in %q", line)
		}
		return []string{line}, nil
	}
	var out []string
	for {
		s = strings.TrimSpace(s)
		if s == "" || s == "]" {
			break
		}
		q := s[0]
		if q != '\'' && q != '"' {
			return nil, fmt.Errorf("expected a quoted key at %q", s)
		}
		var sb strings.Builder
		i := 1
		closed := false
		for i < len(s) {
			c := s[i]
			if c == '\\' && i+1 < len(s) && (s[i+1] == q || s[i+1] == '\\') {
				sb.WriteByte(s[i+1])
				i += 2
				continue
			}
			if c == q {
				closed = true
				i++
				break
			}
			sb.WriteByte(c)
			i++
		}
		if !closed {
			return nil, fmt.Errorf("unterminated quoted key in %q", line)
		}
		out = append(out, sb.String())
		s = strings.TrimSpace(s[i:])
		if strings.HasPrefix(s, ",") {
			s = s[1:]
			continue
		}
		if s == "" || s == "]" || s == "]," {
			break
		}
		return nil, fmt.Errorf("unexpected %q after quoted key", s)
	}
	return out, nil
}
