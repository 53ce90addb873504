package jobs

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeJob(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const fullJob = `# nightly orders load
input:
  - /data/orders-*.csv
  - /data/extra.csv.gz
format: csv
separator: "|"
header: true
null: '\N'
table: ns:orders
out: /data/hfiles
timestamp: 1700000000000
split_uniform: 16
keyspace: hex:8
compression: zstd
bloom: rowcol
encoding: fast_diff
block_size: 128KiB
format_version: 3
memory: 1GiB
max_file_size: 256M
duplicates: last
rejects: /data/rejects.jsonl
max_rejects: 100
workers: 4
json: true
families:
  d:
    compression: snappy
    block_size: 64k
  m:
    bloom: none
mapping:
  columns:
    - name: id
      type: int64
  anything_the_pipeline_wants: [1, 2]
rowkey: [id, ts]
aggregate:
  sum: amount
state_dir: /var/lib/hfload
incremental:
  watermark: updated_at
  watermark_type: time
`

func TestParseFullJob(t *testing.T) {
	p := writeJob(t, "nightly.yaml", fullJob)
	j, err := LoadJob(p, envMap(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "nightly" {
		t.Errorf("name = %q, want file base name nightly", j.Name)
	}
	want := &Job{
		Name: "nightly", Input: []string{"/data/orders-*.csv", "/data/extra.csv.gz"}, Format: "csv",
		Separator: "|", Header: true, Null: `\N`, Table: "ns:orders", Out: "/data/hfiles",
		Timestamp: 1700000000000, SplitUniform: 16, Keyspace: "hex:8", Compression: "zstd", Bloom: "rowcol",
		Encoding: "fast_diff", BlockSize: 128 << 10, FormatVersion: 3, Memory: 1 << 30, MaxFileSize: 256 << 20,
		Duplicates: "last", Rejects: "/data/rejects.jsonl", MaxRejects: 100, Workers: 4, JSON: true,
		Families: map[string]FamilyOptions{"d": {Compression: "snappy", BlockSize: 64 << 10}, "m": {Bloom: "none"}},
		StateDir: "/var/lib/hfload", Incremental: Incremental{Watermark: "updated_at", WatermarkType: "time"},
		File: p,
	}
	got := *j
	got.Mapping, got.RowKey, got.Aggregate = yaml.Node{}, yaml.Node{}, yaml.Node{}
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("job =\n%+v\nwant\n%+v", got, *want)
	}
	// The free-form nodes are kept for the pipeline to decode.
	var mc struct {
		Columns []struct{ Name, Type string }
		Other   []int `yaml:"anything_the_pipeline_wants"`
	}
	if err := j.Mapping.Decode(&mc); err != nil {
		t.Fatal(err)
	}
	if len(mc.Columns) != 1 || mc.Columns[0].Name != "id" || mc.Columns[0].Type != "int64" || len(mc.Other) != 2 {
		t.Errorf("mapping decoded as %+v", mc)
	}
	var rk []string
	if err := j.RowKey.Decode(&rk); err != nil || !reflect.DeepEqual(rk, []string{"id", "ts"}) {
		t.Errorf("rowkey = %v, %v", rk, err)
	}
	if err := j.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if f := j.Family("d"); f.Compression != "snappy" || f.Bloom != "rowcol" || f.Encoding != "fast_diff" || f.BlockSize != 64<<10 {
		t.Errorf("Family(d) = %+v", f)
	}
	if f := j.Family("x"); f.Compression != "zstd" || f.BlockSize != 128<<10 {
		t.Errorf("Family(x) = %+v", f)
	}
	if j.RunParent() != filepath.Join("/data/hfiles", "nightly") {
		t.Errorf("RunParent = %s", j.RunParent())
	}
}

func TestEveryJobKeyIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/jobs.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys() {
		k = strings.ReplaceAll(k, ".FAMILY.", ".")
		last := k[strings.LastIndex(k, ".")+1:]
		if !strings.Contains(string(doc), "`"+last) {
			t.Errorf("docs/jobs.md does not mention key %s", k)
		}
	}
}

func TestUnknownKeyHasLineAndSuggestion(t *testing.T) {
	cases := []struct {
		text, want string
	}{
		{"input: [a.csv]\ncolumns: HBASE_ROW_KEY,d:a\nout: o\n\n\n\n\n\n\n\n\ntabel: t\n", `job.yaml:12: unknown key "tabel" (did you mean "table"?)`},
		{"input: [a]\nmax-file-size: 1G\n", `job.yaml:2: unknown key "max-file-size" (did you mean "max_file_size"?)`},
		{"families:\n  d:\n    compresion: gz\n", `job.yaml:3: unknown key "families.d.compresion" (did you mean "families.d.compression"?)`},
		{"incremental:\n  watermark: ts\n  type: time\n", `job.yaml:3: unknown key "incremental.type"`},
		{"zzzzzzz: 1\n", `job.yaml:1: unknown key "zzzzzzz"`},
		{"table: a\ntable: b\n", `job.yaml:2: key "table" given twice (first at line 1)`},
	}
	for _, c := range cases {
		_, err := ParseJob("job.yaml", []byte(c.text), nil)
		if err == nil {
			t.Errorf("%q: no error", c.text)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.text, err, c.want)
		}
		if strings.Contains(c.want, "(did") == false && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%q: unexpected suggestion in %v", c.text, err)
		}
		if ExitCode(err) != ExitUsage {
			t.Errorf("ExitCode = %d", ExitCode(err))
		}
	}
	// The message is exactly the friendly one, with no prefix.
	_, err := ParseJob("job.yaml", []byte(cases[0].text), nil)
	if err == nil || err.Error() != `job.yaml:12: unknown key "tabel" (did you mean "table"?)` {
		t.Errorf("message: %v", err)
	}
	// Keys inside mapping/rowkey/aggregate are the pipeline's business.
	if _, err := ParseJob("job.yaml", []byte("mapping:\n  whatever: 1\n  nested: {x: y}\n"), nil); err != nil {
		t.Errorf("free-form mapping: %v", err)
	}
}

func TestTypeErrorsHaveLines(t *testing.T) {
	cases := []struct{ text, want string }{
		{"input: [a]\nworkers: many\n", "job.yaml:2: cannot unmarshal !!str `many` into int"},
		{"memory: 12XB\n", `job.yaml:1: size "12XB"`},
		{"header: maybe\n", "job.yaml:1: cannot unmarshal !!str `maybe` into bool"},
		{"input: [a\n", "job.yaml:"},
		{"- a\n- b\n", "job.yaml:1: a job file is a mapping"},
		{"", "empty job file"},
		{"table: a\n---\ntable: b\n", "more than one YAML document"},
	}
	for _, c := range cases {
		_, err := ParseJob("job.yaml", []byte(c.text), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.text, err, c.want)
		}
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%q: %v does not wrap ErrConfig", c.text, err)
		}
	}
}

func TestEnvExpansion(t *testing.T) {
	env := envMap(map[string]string{"DAY": "2026-11-21", "N": "8", "TRICKY": "a: b # not a comment", "EMPTY": ""})
	text := "input:\n  - /data/${DAY}/*.csv\nworkers: ${N}\ntable: '${TRICKY}'\nnull: ${TRICKY}\nrejects: cost$$5\nout: ${OUT:-/tmp/o}\ncolumns: x${EMPTY:-y}z\n" +
		"# ${NOT_EXPANDED_IN_COMMENTS}\nseparator: $\n"
	j, err := ParseJob("j.yaml", []byte(text), env)
	if err != nil {
		t.Fatal(err)
	}
	if j.Input[0] != "/data/2026-11-21/*.csv" || j.Workers != 8 || j.Table != "a: b # not a comment" ||
		j.Null != "a: b # not a comment" || j.Rejects != "cost$5" || j.Out != "/tmp/o" || j.Columns != "xyz" || j.Separator != "$" {
		t.Errorf("expanded job = %+v", j)
	}
	_, err = ParseJob("j.yaml", []byte("table: t\n\nout: /x/${MISSING}/y\n"), env)
	if err == nil || !strings.Contains(err.Error(), "j.yaml:3:") || !strings.Contains(err.Error(), "MISSING is not set") {
		t.Errorf("unset variable: %v", err)
	}
	_, err = ParseJob("j.yaml", []byte("out: ${oops\n"), env)
	if err == nil || !strings.Contains(err.Error(), "j.yaml:1: unterminated") {
		t.Errorf("unterminated: %v", err)
	}
	// A quoted value stays a string even if it looks like a number.
	j, err = ParseJob("j.yaml", []byte("table: \"${N}\"\n"), env)
	if err != nil || j.Table != "8" {
		t.Errorf("quoted: %v %+v", err, j)
	}
}

func TestSetAndApply(t *testing.T) {
	p := writeJob(t, "j.yml", "input: [a.csv]\ntable: t\nfamilies:\n  d:\n    bloom: row\nmapping:\n  timestamp: {column: ts}\n")
	j, err := LoadJob(p, nil, []string{
		"table=ns:t2", "workers=3", "header=true", "memory=512MiB", "input=x.csv, y/*.csv",
		"families.d.compression=gz", "families.v1.x.block_size=8k", "incremental.watermark=ts",
		"mapping.timestamp.column=ts2", "mapping.new.deep=42", "rowkey=[id, ts]", "name=nightly",
		"max-rejects=-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if j.Table != "ns:t2" || j.Workers != 3 || !j.Header || j.Memory != 512<<20 || !reflect.DeepEqual([]string(j.Input), []string{"x.csv", "y/*.csv"}) ||
		j.Families["d"] != (FamilyOptions{Bloom: "row", Compression: "gz"}) || j.Families["v1.x"].BlockSize != 8<<10 ||
		j.Incremental.Watermark != "ts" || j.Name != "nightly" || j.MaxRejects != -1 {
		t.Errorf("after --set: %+v", j)
	}
	var m struct {
		Timestamp struct{ Column string }
		New       struct{ Deep int }
	}
	if err := j.Mapping.Decode(&m); err != nil || m.Timestamp.Column != "ts2" || m.New.Deep != 42 {
		t.Errorf("mapping after --set: %+v %v", m, err)
	}
	var rk []string
	if err := j.RowKey.Decode(&rk); err != nil || !reflect.DeepEqual(rk, []string{"id", "ts"}) {
		t.Errorf("rowkey after --set: %v %v", rk, err)
	}
	// Flags share the code path and accept '-' names.
	if err := j.Apply(map[string]string{"max-file-size": "2GiB", "split-by-salt": "8", "json": "1"}); err != nil {
		t.Fatal(err)
	}
	if j.MaxFileSize != 2<<30 || j.SplitBySalt != 8 || !j.JSON {
		t.Errorf("after Apply: %+v", j)
	}
	bad := []struct{ set, want string }{
		{"workers=x", `workers: "x" is not an integer`},
		{"header=perhaps", `header: "perhaps" is not true or false`},
		{"memory=lots", `size "lots"`},
		{"tabel=x", `unknown key "tabel" (did you mean "table"?)`},
		{"families.d=gz", "want families.NAME.KEY"},
		{"families.d.colour=red", `unknown key "families.d.colour"`},
		{"table.x=1", `"table" has no sub-keys`},
		{"noequals", "want key=value"},
		{"a..b=1", "empty segment"},
		{"incremental={watermark: ts, typo: 1}", `unknown key "incremental.typo"`},
	}
	for _, b := range bad {
		_, err := LoadJob(p, nil, []string{b.set})
		if err == nil || !strings.Contains(err.Error(), b.want) || !errors.Is(err, ErrConfig) {
			t.Errorf("--set %s: got %v, want %q", b.set, err, b.want)
		}
	}
	// A whole struct as YAML.
	j2, err := LoadJob(p, nil, []string{"incremental={watermark: ts, watermark_type: number}"})
	if err != nil || j2.Incremental != (Incremental{Watermark: "ts", WatermarkType: "number"}) {
		t.Errorf("struct --set: %v %+v", err, j2)
	}
}

func validJob() *Job {
	return &Job{Name: "j", Input: []string{"a.csv"}, Table: "t", Out: "o", Columns: "HBASE_ROW_KEY,d:a"}
}

func TestValidate(t *testing.T) {
	if err := validJob().Validate(); err != nil {
		t.Fatalf("minimal job: %v", err)
	}
	cases := []struct {
		mod  func(j *Job)
		want string
	}{
		{func(j *Job) { j.Input = nil }, "input: required"},
		{func(j *Job) { j.Table = "" }, "table: required"},
		{func(j *Job) { j.Table = "a b" }, "illegal character"},
		{func(j *Job) { j.Out = "" }, "out: required"},
		{func(j *Job) { j.Columns = "" }, "columns or mapping: one is required"},
		{func(j *Job) { j.Mapping = yaml.Node{Kind: yaml.MappingNode} }, "give one, not both"},
		{func(j *Job) { j.Format = "xls" }, `format: "xls" is not one of csv, parquet`},
		{func(j *Job) { j.Compression = "brotli" }, `compression: "brotli"`},
		{func(j *Job) { j.Bloom = "col" }, `bloom: "col"`},
		{func(j *Job) { j.Encoding = "rle" }, `encoding: "rle"`},
		{func(j *Job) { j.Duplicates = "merge" }, `duplicates: "merge"`},
		{func(j *Job) { j.Separator = "ab" }, "separator:"},
		{func(j *Job) { j.BlockSize = 100 }, "block_size: 100 is outside"},
		{func(j *Job) { j.BlockSize = 32 << 20 }, "block_size: 32MiB is outside"},
		{func(j *Job) { j.FormatVersion = 1 }, "format_version: 1"},
		{func(j *Job) { j.Memory = 1000 }, "memory: 1000 is below"},
		{func(j *Job) { j.MaxRejects = -2 }, "max_rejects"},
		{func(j *Job) { j.Workers = -1 }, "workers"},
		{func(j *Job) { j.Timestamp = -5 }, "timestamp"},
		{func(j *Job) { j.Splits = "s.txt"; j.SplitUniform = 4 }, "splits, split_uniform: give at most one"},
		{func(j *Job) { j.SplitBySalt = 4; j.SplitSample = 8 }, "split_by_salt, split_sample: give at most one"},
		{func(j *Job) { j.Keyspace = "hex" }, "keyspace: only used with split_uniform"},
		{func(j *Job) { j.SplitUniform = 4; j.Keyspace = "base64" }, "keyspace:"},
		{func(j *Job) { j.Families = map[string]FamilyOptions{".meta": {}} }, `".meta" starts with '.'`},
		{func(j *Job) { j.Families = map[string]FamilyOptions{"a:b": {}} }, "illegal character ':'"},
		{func(j *Job) { j.Families = map[string]FamilyOptions{"a/b": {}} }, "illegal character '/'"},
		{func(j *Job) { j.Families = map[string]FamilyOptions{`a\b`: {}} }, `illegal character '\\'`},
		{func(j *Job) { j.Families = map[string]FamilyOptions{"a\tb": {}} }, "illegal character"},
		{func(j *Job) { j.Families = map[string]FamilyOptions{"": {}} }, "family name is empty"},
		{func(j *Job) { j.Families = map[string]FamilyOptions{"d": {Compression: "lzo"}} }, `families.d.compression: "lzo"`},
		{func(j *Job) { j.Incremental.Watermark = "ts" }, "incremental: needs state_dir"},
		{func(j *Job) { j.StateDir = "s"; j.Incremental = Incremental{Watermark: "ts", WatermarkType: "date"} }, "watermark_type"},
		{func(j *Job) { j.StateDir = "s"; j.Name = "../x" }, "name:"},
		{func(j *Job) { j.StateDir = "s"; j.Name = "" }, "name: required with state_dir"},
	}
	for i, c := range cases {
		j := validJob()
		c.mod(j)
		err := j.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: got %v, want %q", i, err, c.want)
		} else if !errors.Is(err, ErrConfig) {
			t.Errorf("case %d: not ErrConfig", i)
		}
	}
	// Several problems are reported together; enums are normalized.
	j := validJob()
	j.Input, j.Table, j.Compression = nil, "", "GZ"
	err := j.Validate()
	if err == nil || !strings.Contains(err.Error(), "input: required") || !strings.Contains(err.Error(), "table: required") {
		t.Errorf("multiple problems: %v", err)
	}
	if j.Compression != "gz" {
		t.Errorf("compression not normalized: %q", j.Compression)
	}
}

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1048576": 1 << 20, "256MiB": 256 << 20, "256M": 256 << 20, "256mb": 256 << 20, "1GiB": 1 << 30,
		"1g": 1 << 30, "64k": 64 << 10, "64 KiB": 64 << 10, "1.5GiB": 3 << 29, "2T": 2 << 40, "10b": 10, " 7 ": 7,
	}
	for s, want := range good {
		got, err := ParseSize(s)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
		if want > 0 {
			back, err := ParseSize(FormatSize(want))
			if err != nil || back != want {
				t.Errorf("round trip %d via %q: %d %v", want, FormatSize(want), back, err)
			}
		}
	}
	for _, s := range []string{"", "M", "-1", "-1M", "1.5", "abc", "1X", "9999999999P", "0.1b", "NaN"} {
		if v, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) = %d, want error", s, v)
		}
	}
	if FormatSize(256<<20) != "256MiB" || FormatSize(1000) != "1000" || FormatSize(3<<29) != "1536MiB" {
		t.Errorf("FormatSize: %s %s %s", FormatSize(256<<20), FormatSize(1000), FormatSize(3<<29))
	}
}

func TestSettingsDeterministic(t *testing.T) {
	j, err := ParseJob("j.yaml", []byte(fullJob), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := j.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if m["table"] != "ns:orders" || m["memory"] != "1GiB" || m["rowkey"] == nil {
		t.Errorf("settings: %v", m)
	}
	if _, ok := m["split_sample"]; ok {
		t.Errorf("unset key present in settings")
	}
	a, _ := (&Manifest{Settings: m}).Marshal()
	for i := 0; i < 5; i++ {
		m2, _ := j.Settings()
		b, _ := (&Manifest{Settings: m2}).Marshal()
		if string(a) != string(b) {
			t.Fatal("settings JSON not deterministic")
		}
	}
	// Marshal → parse gives the same job back.
	y, err := j.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	j2, err := ParseJob("again.yaml", y, nil)
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, y)
	}
	y2, _ := j2.Marshal()
	if string(y) != string(y2) {
		t.Errorf("marshal not stable:\n%s\n---\n%s", y, y2)
	}
}

func TestSeparatorByte(t *testing.T) {
	for s, want := range map[string]byte{",": ',', `\t`: '\t', "tab": '\t', "\t": '\t', "|": '|', "pipe": '|'} {
		if b, err := SeparatorByte(s); err != nil || b != want {
			t.Errorf("SeparatorByte(%q) = %q %v", s, b, err)
		}
	}
	for _, s := range []string{"", "ab", `"`, "\n"} {
		if _, err := SeparatorByte(s); err == nil {
			t.Errorf("SeparatorByte(%q): no error", s)
		}
	}
}

func TestYAMLConveniences(t *testing.T) {
	text := `defaults: &d
  compression: gz
  block_size: 32k
families:
  "1":
    <<: *d
  true:
    bloom: row
  x:
    <<: *d
    encoding: diff
input: /data/only.csv
null: ""
`
	// "defaults" is not a job key: anchors must live inside known keys.
	if _, err := ParseJob("j.yaml", []byte(text), nil); err == nil || !strings.Contains(err.Error(), `j.yaml:1: unknown key "defaults"`) {
		t.Errorf("got %v", err)
	}
	text = strings.Replace(text, "defaults: &d\n  compression: gz\n  block_size: 32k\nfamilies:\n", "families:\n  base: &d\n    compression: gz\n    block_size: 32k\n", 1)
	j, err := ParseJob("j.yaml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	if j.Families["1"] != (FamilyOptions{Compression: "gz", BlockSize: 32 << 10}) || j.Families["true"].Bloom != "row" ||
		j.Families["x"] != (FamilyOptions{Compression: "gz", BlockSize: 32 << 10, Encoding: "diff"}) {
		t.Errorf("families: %+v", j.Families)
	}
	if len(j.Input) != 1 || j.Input[0] != "/data/only.csv" {
		t.Errorf("scalar input: %q", j.Input)
	}
	// A merged mapping's keys are checked too.
	bad := "families:\n  base: &d\n    compresion: gz\n  x:\n    <<: *d\n"
	if _, err := ParseJob("j.yaml", []byte(bad), nil); err == nil || !strings.Contains(err.Error(), "j.yaml:3: unknown key") {
		t.Errorf("merged typo: %v", err)
	}
	j = validJob()
	j.Input = []string{"data/[a-.csv"}
	if err := j.Validate(); err == nil || !strings.Contains(err.Error(), "not a valid glob") {
		t.Errorf("bad glob: %v", err)
	}
}

func TestSetClearsFreeFormNode(t *testing.T) {
	j, err := ParseJob("j.yaml", []byte("mapping:\n  a: 1\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Set("mapping", ""); err != nil || !j.Mapping.IsZero() {
		t.Errorf("mapping not cleared: %v %+v", err, j.Mapping)
	}
}
