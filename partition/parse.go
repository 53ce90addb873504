package partition

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/hfload/hfload/internal/kv"
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
// Lines starting with an HBase shell prompt ("hbase:001:0> ") are skipped. A whole shell command line
// is accepted too: text up to `SPLITS =>` is skipped, and a closing `}` after
// the list is ignored.
//
// The output of the shell's `list_regions 'table'` can be pasted as is: from a header line with a
// START_KEY column on, the column layout of the header (right-aligned columns each followed by " |")
// locates the START_KEY of every following row, so keys containing '|' are read correctly; the
// dashes line, the empty start key of the first region and lines like "3 rows" are skipped.
//
// The keys must be non-empty, sorted and unique; errors name the offending line numbers.
func ParseSplits(r io.Reader) (Splits, error) {
	var out Splits
	var lines []int // line number of each key, for error messages
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*kv.MaxRowLength+1024)
	lineNo := 0
	var table *regionTable // set once a list_regions header was seen
	for sc.Scan() {
		lineNo++
		raw := strings.TrimRight(sc.Text(), "\r")
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' {
			continue
		}
		if isShellPrompt(line) {
			continue // e.g. "hbase:001:0> list_regions 'orders'" pasted with the output
		}
		if t, ok := parseRegionTableHeader(raw); ok {
			table = t
			continue
		}
		var texts []string
		if table != nil {
			key, ok := table.startKey(raw)
			if !ok && strings.HasSuffix(line, "|") {
				return nil, fmt.Errorf("split points line %d: list_regions row does not line up with the header's columns", lineNo)
			}
			if !ok || key == "" {
				continue // dashes, "N rows", "Took ..." or the first region
			}
			texts = []string{key}
		} else {
			var err error
			if texts, err = lineKeys(line); err != nil {
				return nil, fmt.Errorf("split points line %d: %w", lineNo, err)
			}
		}
		for _, t := range texts {
			k, err := kv.FromStringBinary(t)
			if err != nil {
				return nil, fmt.Errorf("split points line %d: %w", lineNo, err)
			}
			if len(k) == 0 {
				return nil, fmt.Errorf("split points line %d: empty key (the empty key is the table start, not a split point)", lineNo)
			}
			if len(k) > kv.MaxRowLength {
				return nil, fmt.Errorf("split points line %d: key of %d bytes exceeds HBase's row limit %d", lineNo, len(k), kv.MaxRowLength)
			}
			if n := len(out); n > 0 {
				switch c := bytes.Compare(out[n-1], k); {
				case c == 0:
					return nil, fmt.Errorf("split points line %d: duplicate key %q (also on line %d)", lineNo, t, lines[n-1])
				case c > 0:
					return nil, fmt.Errorf("split points line %d: key %q sorts before %q on line %d; split points must be sorted",
						lineNo, t, kv.ToStringBinary(out[n-1]), lines[n-1])
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
	if i := strings.Index(s, "SPLITS"); i >= 0 {
		if rest := strings.TrimSpace(s[i+len("SPLITS"):]); strings.HasPrefix(rest, "=>") {
			s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest[2:]), "}"))
			line = s
		}
	}
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

// shellPrompt matches an HBase shell prompt: "hbase:001:0> " (2.x) or "hbase(main):001:0> " (1.x).
var shellPrompt = regexp.MustCompile(`^hbase(\(main\))?:\d+:\d+> `)

// isShellPrompt is shellPrompt.MatchString(s), without running the expression for a line that does not
// start with "hbase" (a split file's every other line: one per region).
func isShellPrompt(s string) bool {
	return strings.HasPrefix(s, "hbase") && shellPrompt.MatchString(s)
}

// regionTable is the column layout of `list_regions` output: bars[i] is the offset of the '|' closing
// column i; the START_KEY column is column col.
type regionTable struct {
	bars []int
	col  int
}

// parseRegionTableHeader recognizes a list_regions header such as
// "  SERVER_NAME |  REGION_NAME |  START_KEY |    END_KEY |  SIZE |   REQ |   LOCALITY |".
func parseRegionTableHeader(raw string) (*regionTable, bool) {
	if !strings.HasSuffix(strings.TrimSpace(raw), "|") || !strings.Contains(raw, "START_KEY") {
		return nil, false
	}
	t := &regionTable{col: -1}
	prev := -1
	for i := 0; i < len(raw); i++ {
		if raw[i] != '|' {
			continue
		}
		if strings.TrimSpace(raw[prev+1:i]) == "START_KEY" {
			t.col = len(t.bars)
		}
		t.bars = append(t.bars, i)
		prev = i
	}
	return t, t.col >= 0
}

// startKey returns the START_KEY cell of a data row laid out like the header.
func (t *regionTable) startKey(raw string) (string, bool) {
	last := t.bars[len(t.bars)-1]
	if len(raw) <= last {
		return "", false
	}
	for _, b := range t.bars {
		if raw[b] != '|' {
			return "", false
		}
	}
	if strings.Trim(raw, " -|") == "" {
		return "", true // the dashes line
	}
	start := 0
	if t.col > 0 {
		start = t.bars[t.col-1] + 1
	}
	return strings.TrimSpace(raw[start:t.bars[t.col]]), true
}
