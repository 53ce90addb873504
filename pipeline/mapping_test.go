package pipeline

import (
	"bytes"
	"crypto/md5"
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const typedYAML = `
columns:
  - {name: id, type: long}
  - {name: name, cell: "d:name", trim: true}
  - {name: age, type: int, cell: "d:age"}
  - {name: score, type: double, cell: "d:score", on_null: empty}
  - {name: ok, type: boolean, cell: "d:ok", default: "false"}
  - {name: blob, type: hex, cell: "d:blob"}
  - {name: b64, type: base64, cell: "d:b64"}
  - {name: price, type: decimal, cell: "d:price"}
  - {name: small, type: short, cell: "d:small"}
  - {name: f, type: float, cell: "d:f"}
  - {name: seen, type: timestamp, format: "2006-01-02 15:04:05", timezone: "Europe/Berlin", cell: "d:seen"}
rowkey:
  - {column: id}
timestamp: {value: 1000}
`

func compileYAML(t testing.TB, src string) *Mapping {
	t.Helper()
	var cfg MappingConfig
	if err := yaml.Unmarshal([]byte(src), &cfg); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	return mustCompile(t, &cfg)
}

func TestTypedColumns(t *testing.T) {
	m := compileYAML(t, typedYAML)
	b := textBatch("t.csv", 0, 0, [][]string{
		{"1", "  Ann ", "42", "1.5", "true", "00ff", "AQID", "12.30", "-2", "0.1", "2024-03-01 12:00:00"},
		{"-1", NUL, NUL, NUL, NUL, NUL, NUL, NUL, NUL, NUL, NUL},
		{"2", "x", "2147483648", "", "", "", "", "", "", "", ""}, // int overflow
		{"3", "\xff", "1", "", "", "", "", "", "", "", ""},       // invalid UTF-8 for string
		{"9223372036854775808", "x", "1", "", "", "", "", "", "", "", ""},
		{"4", "x", "1", "1e999", "", "", "", "", "", "", ""},
		{"5", "x", "1", "", "maybe", "", "", "", "", "", ""},
		{"6", "x", "1", "", "", "0g", "", "", "", "", ""},
		{"7", "x", "1", "", "", "", "!!", "", "", "", ""},
		{"8", "x", "1", "", "", "", "", "1.2.3", "", "", ""},
		{"9", "x", "1", "", "", "", "", "", "40000", "", ""},
		{"10", "x", "1", "", "", "", "", "", "", "", "2024-13-01 00:00:00"},
	})
	// Empty (non-NULL) text in typed columns is not a number: make those NULL for the error rows.
	for i := 2; i < b.NumRows; i++ {
		for j := 0; j < b.NumCols; j++ {
			if f, _ := b.Field(i, j); len(f) == 0 {
				b.Nulls[i*b.NumCols+j] = true
			}
		}
	}
	var cb CellBatch
	var rej bytes.Buffer
	mp := m.NewMapper()
	if err := mp.MapBatch(b, []string{"id", "name", "age", "score", "ok", "blob", "b64", "price", "small", "f", "seen"}, &cb, NewRejectSink(&rej, -1)); err != nil {
		t.Fatal(err)
	}
	k1 := `\x00\x00\x00\x00\x00\x00\x00\x01`
	km1 := `\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF`
	equalLines(t, cellLines(t, &cb), []string{
		"0 0/0 " + k1 + "\td:name\t1000\tPut\tAnn",
		"0 0/0 " + k1 + "\td:age\t1000\tPut\t\\x00\\x00\\x00*",
		"0 0/0 " + k1 + "\td:score\t1000\tPut\t?\\xF8\\x00\\x00\\x00\\x00\\x00\\x00",
		"0 0/0 " + k1 + "\td:ok\t1000\tPut\t\\xFF",
		"0 0/0 " + k1 + "\td:blob\t1000\tPut\t\\x00\\xFF",
		"0 0/0 " + k1 + "\td:b64\t1000\tPut\t\\x01\\x02\\x03",
		"0 0/0 " + k1 + "\td:price\t1000\tPut\t12.30",
		"0 0/0 " + k1 + "\td:small\t1000\tPut\t\\xFF\\xFE",
		"0 0/0 " + k1 + "\td:f\t1000\tPut\t=\\xCC\\xCC\\xCD",
		// 2024-03-01 12:00:00 CET = 11:00:00 UTC = 1709290800000 ms = 0x18DF9ABC380
		"0 0/0 " + k1 + "\td:seen\t1000\tPut\t\\x00\\x00\\x01\\x8D\\xF9\\xAB\\xC3\\x80",
		"0 0/1 " + km1 + "\td:score\t1000\tPut\t",   // on_null: empty
		"0 0/1 " + km1 + "\td:ok\t1000\tPut\t\\x00", // default false
	})
	c := mp.Counts()
	if c.RowsRead != 12 || c.RowsKeyed != 2 || c.RowsRejected != 10 || c.NullsSkipped != 8 || c.CellsEmitted != 12 {
		t.Fatalf("counts %+v", c)
	}
	wantReasons := []string{
		`column "age": 2147483648 overflows type int`,
		`column "name": invalid UTF-8 for type string`,
		`row key: column "id": "9223372036854775808" overflows a 64-bit integer`,
		`column "score": "1e999" overflows type double`,
		`column "ok": "maybe" is not a boolean`,
		`column "blob": "0g" is not hex`,
		`column "b64": "!!" is not base64`,
		`column "price": "1.2.3" is not a decimal number`,
		`column "small": 40000 overflows type short`,
		`column "seen": timestamp "2024-13-01 00:00:00" does not match layout`,
	}
	lines := strings.Split(strings.TrimSpace(rej.String()), "\n")
	if len(lines) != len(wantReasons) {
		t.Fatalf("%d rejects: %s", len(lines), rej.String())
	}
	for i, l := range lines {
		var r struct {
			Line   int64
			Reason string
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.Reason, wantReasons[i]) || r.Line != int64(i+4) {
			t.Errorf("reject %d: line %d %q, want line %d %q", i, r.Line, r.Reason, i+4, wantReasons[i])
		}
	}
}

func TestRowKeyParts(t *testing.T) {
	m := compileYAML(t, `
columns:
  - {name: host, cell: "d:host"}
  - {name: id, type: long}
  - {name: code}
  - {name: phone}
  - {name: ts, type: timestamp, format: s}
rowkey:
  - {column: host}
  - {literal: "|"}
  - {column: id, flip_sign: true}
  - {column: code, width: 5}
  - {column: code, width: 4, pad: right, pad_char: "_"}
  - {column: phone, reverse: true}
  - {reverse_timestamp: ts}
  - {time_bucket: {column: ts, interval: 1h}}
  - {literal: "\\x00"}
timestamp: {column: ts}
`)
	b := textBatch("k.csv", 1, 100, [][]string{
		{"web1", "-2", "42", "5551234", "3600"},
		{"web1", "1", "123456", "1", "1"}, // code too wide
		{"web1", "1", "1", "1", "-1"},     // negative time for reverse_timestamp
	})
	var cb CellBatch
	var rej bytes.Buffer
	if err := m.NewMapper().MapBatch(b, []string{"host", "id", "code", "phone", "ts"}, &cb, NewRejectSink(&rej, -1)); err != nil {
		t.Fatal(err)
	}
	// id -2 with flipped sign: 0x7FFFFFFFFFFFFFFE; rev ts = MaxInt64-3600000 = 0x7FFFFFFFFFC9117F;
	// bucket of 3600 s = 3600 = 0x00000E10.
	key := `web1|\x7F\xFF\xFF\xFF\xFF\xFF\xFF\xFE00042` + `42__` + `4321555` +
		`\x7F\xFF\xFF\xFF\xFF\xC9\x11\x7F` + `\x00\x00\x0E\x10` + `\x00`
	equalLines(t, cellLines(t, &cb), []string{"0 1/100 " + key + "\td:host\t3600000\tPut\tweb1"})
	if !strings.Contains(rej.String(), `5 bytes do not fit width 4`) && !strings.Contains(rej.String(), `6 bytes do not fit width 5`) {
		t.Errorf("rejects: %s", rej.String())
	}
	if !strings.Contains(rej.String(), `negative time`) {
		t.Errorf("rejects: %s", rej.String())
	}
}

func TestSaltAndHash(t *testing.T) {
	m := compileYAML(t, `
columns:
  - {name: cust}
  - {name: order, type: int, cell: "d:o"}
rowkey:
  - {salt: 16}
  - {hash: {parts: [{column: cust}], bytes: 4}}
  - {column: order}
timestamp: {value: 1}
`)
	var cb CellBatch
	if err := m.NewMapper().MapBatch(textBatch("s", 0, 0, [][]string{{"alice", "7"}}), []string{"cust", "order"}, &cb, nil); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte("alice"))
	rest := append(append([]byte{}, sum[:4]...), 0, 0, 0, 7)
	want := append([]byte{SaltByte(rest, 16)}, rest...)
	buf, refs := batchKeyValues(t, &cb)
	kv := buf[refs[0].Off : refs[0].Off+refs[0].Len]
	row := kv[10 : 10+len(want)]
	if !bytes.Equal(row, want) || int(kv[8])<<8|int(kv[9]) != len(want) {
		t.Fatalf("row %x, want %x", row, want)
	}
}

// TestSaltByte checks Phoenix's SaltingUtil.getSaltingByte: hash = 31*hash + (signed byte), from 1.
// Vectors derived by hand:
//
//	"a"  : 31*1 + 97 = 128;            128 % 16 = 0;  128 % 10 = 8
//	"ab" : 31*128 + 98 = 4066;         4066 % 16 = 2
//	0xFF : 31*1 + (-1) = 30;           30 % 16 = 14
//	0x80 : 31*1 + (-128) = -97; abs 97; 97 % 16 = 1
//	""   : 1;                          1 % 16 = 1
func TestSaltByte(t *testing.T) {
	for _, tc := range []struct {
		key     []byte
		buckets int
		want    byte
	}{
		{[]byte("a"), 16, 0}, {[]byte("a"), 10, 8}, {[]byte("ab"), 16, 2},
		{[]byte{0xFF}, 16, 14}, {[]byte{0x80}, 16, 1}, {nil, 16, 1}, {[]byte("ab"), 1, 0},
	} {
		if got := SaltByte(tc.key, tc.buckets); got != tc.want {
			t.Errorf("SaltByte(%q, %d) = %d, want %d", tc.key, tc.buckets, got, tc.want)
		}
	}
	// Math.abs(Integer.MIN_VALUE) is negative in Java: find a key with hash MinInt32 by brute force is
	// costly; check the arithmetic directly instead: (byte)(MIN_VALUE % 10) = (byte)-8 = 0xF8.
	h := int32(-2147483648)
	if h < 0 {
		h = -h
	}
	if byte(h%10) != 0xF8 {
		t.Errorf("Java abs/remainder semantics: got %x", byte(h%10))
	}
}

func TestQualifiersFromData(t *testing.T) {
	m := compileYAML(t, `
columns:
  - {name: metric}
  - {name: host}
  - {name: ts, type: timestamp, format: s}
  - {name: v, type: double}
rowkey:
  - {column: metric}
  - {time_bucket: {column: ts, interval: 1h, unit: s, width: 4}}
  - {column: host}
cells:
  - family: t
    qualifier_parts: [{time_offset: {column: ts, interval: 1h, unit: s, width: 2}}]
    value: v
  - family: m
    qualifier: "${metric}|${host}"
    value: v
timestamp: {value: 7}
`)
	b := textBatch("m.csv", 0, 0, [][]string{
		{"cpu", "h1", "7261", "0.5"}, // bucket 7200 (0x1C20), offset 61 (0x003D)
		{"cpu", "h1", "7300", "1"},   // same HBase row, another qualifier
	})
	var cb CellBatch
	if err := m.NewMapper().MapBatch(b, []string{"metric", "host", "ts", "v"}, &cb, nil); err != nil {
		t.Fatal(err)
	}
	row := `cpu\x00\x00\x1C h1`
	equalLines(t, cellLines(t, &cb), []string{
		"0 0/0 " + row + "\tt:\\x00=\t7\tPut\t?\\xE0\\x00\\x00\\x00\\x00\\x00\\x00",
		"1 0/0 " + row + "\tm:cpu|h1\t7\tPut\t?\\xE0\\x00\\x00\\x00\\x00\\x00\\x00",
		"0 0/1 " + row + "\tt:\\x00d\t7\tPut\t?\\xF0\\x00\\x00\\x00\\x00\\x00\\x00",
		"1 0/1 " + row + "\tm:cpu|h1\t7\tPut\t?\\xF0\\x00\\x00\\x00\\x00\\x00\\x00",
	})
	if f := m.Families(); len(f) != 2 || f[0] != "t" || f[1] != "m" {
		t.Fatalf("families %v", f)
	}
}

func TestOversizedAndEmptyKeys(t *testing.T) {
	m := compileYAML(t, `
columns: [{name: k, cell: "d:q", on_null: empty}]
rowkey: [{column: k}]
timestamp: {value: 1}
`)
	big := strings.Repeat("x", 32768)
	b := textBatch("o", 0, 0, [][]string{{big}, {NUL}, {strings.Repeat("y", 32767)}})
	var cb CellBatch
	mp := m.NewMapper()
	var rej bytes.Buffer
	if err := mp.MapBatch(b, []string{"k"}, &cb, NewRejectSink(&rej, -1)); err != nil {
		t.Fatal(err)
	}
	if cb.Cells() != 1 || mp.Counts().RowsRejected != 2 {
		t.Fatalf("cells %d counts %+v", cb.Cells(), mp.Counts())
	}
	if !strings.Contains(rej.String(), "exceeds HBase's limit of 32767") || !strings.Contains(rej.String(), "empty row key") {
		t.Fatalf("rejects %s", rej.String()[:200])
	}
}

func TestNullKeyPartRejects(t *testing.T) {
	m := compileYAML(t, `
columns: [{name: k}, {name: v, cell: "d:v"}]
rowkey: [{column: k}]
timestamp: {value: 1}
`)
	var cb CellBatch
	err := m.NewMapper().MapBatch(textBatch("n.csv", 0, 0, [][]string{{NUL, "x"}}), []string{"k", "v"}, &cb, NewRejectSink(nil, 0))
	if err == nil || !strings.Contains(err.Error(), "n.csv:2") || !strings.Contains(err.Error(), `column "k" is NULL`) {
		t.Fatalf("err = %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{`columns: [{name: a}]
rowkey: [{column: a}]`, "no cells"},
		{`columns: [{name: a, cell: "d:a"}]`, "no parts"},
		{`columns: [{name: a, cell: "d:a"}]
rowkey: [{column: b}]`, `unknown column "b"`},
		{`columns: [{name: a, cell: "d:a", type: weird}]
rowkey: [{column: a}]`, "unknown type"},
		{`columns: [{name: a, cell: "d:a"}]
rowkey: [{salt: 300}]`, "out of range"},
		{`columns: [{name: a, cell: "d:a"}]
rowkey: [{salt: 4}, {salt: 4}]`, "only one salt"},
		{`columns: [{name: a, cell: "d:a"}]
rowkey: [{column: a, literal: "x"}]`, "exactly one"},
		{`columns: [{name: a, cell: "d:a"}]
rowkey: [{hash: {parts: [{salt: 2}]}}]`, "salt is only allowed"},
		{`columns: [{name: a, cell: "d:a"}]
rowkey: [{column: a, flip_sign: true}]`, "flip_sign needs"},
		{`columns: [{name: a, cell: "d:a", type: int, default: "x"}]
rowkey: [{column: a}]`, "default"},
		{`columns: [{name: a, cell: "d:a", type: timestamp, timezone: Local}]
rowkey: [{column: a}]`, "Local"},
		{`families: [x]
columns: [{name: a, cell: "d:a"}]
rowkey: [{column: a}]`, "not in families"},
		{`columns: [{name: a, cell: "d:a"}, {name: t}]
rowkey: [{time_bucket: {column: t, interval: 1d, unit: ms, width: 4}}, {column: a}]
cells: [{family: d, value: a, qualifier_parts: [{time_offset: {column: t, interval: 1d, width: 2}}]}]`, "do not fit"},
		{`columns: [{name: a, cell: "d:a"}, {name: t}]
rowkey: ["time_bucket(t, 1h, ms)"]`, "needs width 8"},
		{`columns: [{name: a, cell: "d:a"}]
rowkey: [{column: a, pad: left}]`, "need a width"},
		{`columns: [{name: a, cell: "d:a"}]
rowkey: [{column: a, width: 3, pad_char: "ab"}]`, "exactly one byte"},
		{`columns: [{name: a, cell: "d:a"}, {name: a}]
rowkey: [a]`, "used twice"},
		{`columns: [{name: a, cell: "d:a"}]
rowkey: [a]
cells: [{family: d, value: a, qualifier: "${a"}]`, "unclosed"},
		{`columns: [{name: a, cell: "d:a"}]
rowkey: [a]
timestamp: {column: a, value: 5}`, "exclusive"},
	} {
		var cfg MappingConfig
		if err := yaml.Unmarshal([]byte(tc.yaml), &cfg); err != nil {
			t.Fatalf("yaml %q: %v", tc.yaml, err)
		}
		_, err := Compile(&cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%q) = %v, want error containing %q", tc.yaml, err, tc.want)
		}
	}
}

func TestBindByHeader(t *testing.T) {
	m := compileYAML(t, `
columns: [{name: v, cell: "d:v"}, {name: k}]
rowkey: [{column: k}]
timestamp: {value: 1}
`)
	b := textBatch("h.csv", 0, 0, [][]string{{"key1", "val1"}})
	var cb CellBatch
	mp := m.NewMapper()
	if err := mp.MapBatch(b, nil, &cb, nil); err == nil || !strings.Contains(err.Error(), "no header") {
		t.Fatalf("without header: %v", err)
	}
	if err := mp.MapBatch(b, []string{"k", "v"}, &cb, nil); err != nil {
		t.Fatal(err)
	}
	equalLines(t, cellLines(t, &cb), []string{"0 0/0 key1\td:v\t1\tPut\tval1"})
	if err := mp.MapBatch(b, []string{"x", "y"}, &cb, nil); err == nil || !strings.Contains(err.Error(), "not in the input") {
		t.Fatalf("bad header: %v", err)
	}
	if err := mp.MapBatch(b, []string{"k", "v", "k"}, &cb, nil); err == nil || !strings.Contains(err.Error(), "appears 2 times") {
		t.Fatalf("ambiguous header: %v", err)
	}
	cb = CellBatch{}
	if err := mp.MapBatch(b, []string{" K ", "V"}, &cb, nil); err != nil {
		t.Fatalf("case-insensitive header: %v", err)
	}
	equalLines(t, cellLines(t, &cb), []string{"0 0/0 key1\td:v\t1\tPut\tval1"})
}

func TestCompactParts(t *testing.T) {
	compact := compileYAML(t, `
columns:
  - {name: host}
  - {name: phone}
  - {name: ts, type: timestamp, format: s}
  - {name: v, type: long}
rowkey: [salt(8), "hash(host, phone, 2)", "'|'", reverse(phone), reverse_timestamp(ts), "time_bucket(ts, 1d, ms, 8)"]
cells:
  - {family: d, value: v, qualifier_parts: ["time_offset(ts, 1d, s, 3)"]}
timestamp: {value: 3}
`)
	long := compileYAML(t, `
columns:
  - {name: host}
  - {name: phone}
  - {name: ts, type: timestamp, format: s}
  - {name: v, type: long}
rowkey:
  - {salt: 8}
  - {hash: {parts: [{column: host}, {column: phone}], bytes: 2}}
  - {literal: "|"}
  - {column: phone, reverse: true}
  - {reverse_timestamp: ts}
  - {time_bucket: {column: ts, interval: 1d, unit: ms, width: 8}}
cells:
  - family: d
    value: v
    qualifier_parts: [{time_offset: {column: ts, interval: 1d, unit: s, width: 3}}]
timestamp: {value: 3}
`)
	hdr := []string{"host", "phone", "ts", "v"}
	rows := [][]string{{"h", "5551234", "90061", "9"}, {"g", "1", "0", "-1"}}
	var a, b CellBatch
	if err := compact.NewMapper().MapBatch(textBatch("c", 0, 0, rows), hdr, &a, nil); err != nil {
		t.Fatal(err)
	}
	if err := long.NewMapper().MapBatch(textBatch("c", 0, 0, rows), hdr, &b, nil); err != nil {
		t.Fatal(err)
	}
	la, lb := cellLines(t, &a), cellLines(t, &b)
	equalLines(t, la, lb)
	// 90061 s = 1 day + 3661 s: qualifier offset 3661 = 0x000E4D.
	if len(la) != 2 || !strings.Contains(la[0], "\td:\\x00\\x0EM\t") {
		t.Fatalf("cells %q", la)
	}
	for _, bad := range []string{"salt()", "salt(x)", "nope(a)", "a,b", "time_bucket(ts)", "hash(a", "salt(0)"} {
		if _, err := ParsePart(bad); err == nil {
			t.Errorf("ParsePart(%q) accepted", bad)
		}
	}
}

// A row key that is one bytes column as it is takes the field's bytes without building a copy
// (Mapping.keyField); trimming and defaults still apply to it, and every other key is built.
func TestKeyFieldIsTheFieldAsItIs(t *testing.T) {
	for _, c := range []struct {
		rowkey string
		want   int
	}{
		{`[{column: k}]`, 0},
		{`[{column: v}]`, 1},
		{`[{column: k, width: 4}]`, -1},
		{`[{column: k, reverse: true}]`, -1},
		{`[{column: k}, {literal: "|"}]`, -1},
		{`[{column: n}]`, -1}, // type long
	} {
		m := compileYAML(t, "columns: [{name: k, trim: true, default: dflt}, {name: v, cell: \"d:v\"}, {name: n, type: long}]\n"+
			"rowkey: "+c.rowkey+"\ntimestamp: {value: 1}\n")
		if got, _ := m.keyField(); got != c.want {
			t.Errorf("rowkey %s: keyField %d, want %d", c.rowkey, got, c.want)
		}
	}
	m := compileYAML(t, "columns: [{name: k, trim: true, default: dflt}, {name: v, cell: \"d:v\"}]\nrowkey: [{column: k}]\ntimestamp: {value: 1}\n")
	var cb CellBatch
	b := textBatch("k.csv", 0, 0, [][]string{{"  a b ", "x"}, {NUL, "y"}, {"c\xff", "w"}, {"c", "z"}})
	var rej bytes.Buffer
	if err := m.NewMapper().MapBatch(b, []string{"k", "v"}, &cb, NewRejectSink(&rej, -1)); err != nil {
		t.Fatal(err)
	}
	equalLines(t, cellLines(t, &cb), []string{"0 0/0 a b\td:v\t1\tPut\tx", "0 0/1 dflt\td:v\t1\tPut\ty", "0 0/3 c\td:v\t1\tPut\tz"})
	if !strings.Contains(rej.String(), "invalid UTF-8") {
		t.Errorf("a key of type string that is not UTF-8 is not refused: rejects %q", rej.String())
	}
}
