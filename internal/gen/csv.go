package gen

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"
)

func genWriteCSV(w io.Writer, t genTable, opts Options) (int64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	cols := t.columns()
	vals := make([]genValue, len(cols))
	var line []byte
	var written int64
	if opts.Header {
		for j, c := range cols {
			if j > 0 {
				line = append(line, opts.Separator)
			}
			line = genAppendCSVString(line, []byte(c.name), opts)
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return 0, fmt.Errorf("gen: write: %w", err)
		}
		written += int64(len(line))
	}
	var n int64
	for ; opts.Rows == 0 || n < opts.Rows; n++ {
		if opts.TargetBytes > 0 && written >= opts.TargetBytes {
			break
		}
		t.row(n, vals)
		line = line[:0]
		for j, v := range vals {
			if j > 0 {
				line = append(line, opts.Separator)
			}
			if v.null {
				line = append(line, opts.Null...)
				continue
			}
			switch cols[j].kind {
			case kindInt64, kindInt32:
				line = strconv.AppendInt(line, v.i, 10)
			case kindDecimal2:
				line = genAppendDecimal2(line, v.i)
			case kindDateTime:
				line = time.Unix(v.i, 0).UTC().AppendFormat(line, time.DateTime)
			case kindFloat64:
				line = strconv.AppendFloat(line, v.f, 'f', -1, 64)
			case kindString:
				line = genAppendCSVString(line, v.s, opts)
			}
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return n, fmt.Errorf("gen: write: %w", err)
		}
		written += int64(len(line))
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("gen: write: %w", err)
	}
	return n, nil
}

// genAppendCSVString appends s, quoted when it would otherwise be misread.
func genAppendCSVString(dst, s []byte, opts Options) []byte {
	needs := len(s) == 0 || (opts.Null != "" && string(s) == opts.Null)
	if !needs {
		for _, c := range s {
			if c == opts.Separator || c == '"' || c == '\n' || c == '\r' {
				needs = true
				break
			}
		}
	}
	if !needs {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for {
		i := bytes.IndexByte(s, '"')
		if i < 0 {
			break
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, '"')
		s = s[i+1:]
	}
	dst = append(dst, s...)
	return append(dst, '"')
}

// genAppendDecimal2 appends v/100 with exactly two decimals.
func genAppendDecimal2(dst []byte, v int64) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	dst = strconv.AppendInt(dst, v/100, 10)
	return append(dst, '.', byte('0'+v%100/10), byte('0'+v%10))
}
