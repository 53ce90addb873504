package pipeline

import (
	"strconv"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// fuzzConfig turns fuzz bytes into a mapping with up to 8 row-key parts over three columns.
func fuzzConfig(spec []byte) *MappingConfig {
	next := func() int {
		if len(spec) == 0 {
			return 0
		}
		b := spec[0]
		spec = spec[1:]
		return int(b)
	}
	types := []string{"string", "bytes", "long", "int", "short", "double", "float", "boolean", "hex", "base64", "decimal", "timestamp"}
	cfg := &MappingConfig{
		Columns: []ColumnConfig{
			{Name: "a", Index: ptr(0), Cell: "d:a", Type: types[next()%len(types)]},
			{Name: "b", Index: ptr(1), Type: types[next()%len(types)], OnNull: []string{"", "empty"}[next()%2]},
			{Name: "c", Index: ptr(2), Type: "timestamp", Format: []string{"s", "ms", "2006-01-02"}[next()%3]},
		},
		Timestamp: TimestampConfig{Value: ptr(int64(1))},
	}
	cols := []string{"a", "b", "c"}
	n := next()%8 + 1
	for i := 0; i < n; i++ {
		var p PartConfig
		switch next() % 8 {
		case 0, 1:
			p.Column = cols[next()%3]
			if next()%2 == 1 {
				p.Type = types[next()%len(types)]
			}
			p.FlipSign = next()%4 == 0
			p.Reverse = next()%4 == 0
			if w := next() % 6; w > 0 {
				p.Width = w * 3
				p.Pad = []string{"left", "right"}[next()%2]
			}
		case 2:
			lit := string([]byte{byte(next()), byte(next())})
			p.Literal = &lit
		case 3:
			p.Salt = next() + 1 - 2 // may be out of range
		case 4:
			p.Hash = &HashConfig{Parts: []PartConfig{{Column: cols[next()%3]}}, Bytes: next() % 18}
		case 5:
			p.ReverseTimestamp = cols[next()%3]
		case 6:
			p.TimeBucket = &TimeConfig{Column: "c", Interval: strconv.Itoa(next()%100+1) + "m", Width: 4 * (next() % 3)}
		case 7:
			p.TimeOffset = &TimeConfig{Column: "c", Interval: "1h", Width: next() % 5}
		}
		cfg.RowKey = append(cfg.RowKey, p)
	}
	return cfg
}

func FuzzRowKey(f *testing.F) {
	f.Add([]byte{0, 2, 0, 3, 0, 0, 0, 1, 0, 5, 2, '|', 0, 6, 3}, "web1", "42", "1700000000", false)
	f.Add([]byte{2, 3, 1, 5, 3, 15, 4, 1, 4, 1, 0, 1, 6, 7}, "aGVsbG8=", "-9223372036854775808", "2024-01-01", true)
	f.Add([]byte{10, 11, 0, 7, 7, 5, 6, 2, 1, 1, 1, 1, 2, 1, 3}, "\xff\xfe", "1e308", "-5", false)
	f.Fuzz(func(t *testing.T, spec []byte, a, b, c string, bNull bool) {
		cfg := fuzzConfig(spec)
		m, err := Compile(cfg)
		if err != nil {
			return
		}
		bv := b
		if bNull {
			bv = NUL
		}
		batch := textBatch("fuzz", 0, 0, [][]string{{a, bv, c}})
		var cb CellBatch
		mp := m.NewMapper()
		rs := NewRejectSink(nil, -1)
		if err := mp.MapBatch(batch, nil, &cb, rs); err != nil {
			t.Fatalf("MapBatch: %v", err)
		}
		cnt := mp.Counts()
		if cnt.RowsRead != 1 || cnt.RowsKeyed+cnt.RowsRejected != 1 || rs.Count() != cnt.RowsRejected {
			t.Fatalf("counts %+v, rejects %d", cnt, rs.Count())
		}
		buf, refs := batchKeyValues(t, &cb)
		for _, r := range refs {
			key, _, n, err := kv.SplitKeyValue(buf[r.Off : r.Off+r.Len])
			if err != nil || n != int(r.Len) {
				t.Fatalf("bad KeyValue: %v", err)
			}
			row := kv.Key(key).Row()
			if len(row) == 0 || len(row) > kv.MaxRowLength {
				t.Fatalf("row of %d bytes emitted", len(row))
			}
		}
	})
}
