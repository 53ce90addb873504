package jobs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/hfload/hfload/internal/engine"
	"gopkg.in/yaml.v3"

	"github.com/hfload/hfload/internal/suggest"
)

// Job is everything one `hfload run` needs. Every `hfload run` flag has a key
// of the same name with '_' for '-'; families, mapping, rowkey, aggregate,
// state_dir, incremental and name exist only in job files (and --set).
// Zero values mean "not set": the consuming package applies its default.
type Job struct {
	Name string `yaml:"name,omitempty"` // job name; default: job file base name without extension

	// Input.
	Input     StringList `yaml:"input,omitempty"`     // paths or globs; "-" = stdin
	Format    string     `yaml:"format,omitempty"`    // csv | parquet | "" (from extension)
	Dialect   string     `yaml:"dialect,omitempty"`   // csv | postgres-text | postgres-csv | mysql | mysql-csv
	Separator string     `yaml:"separator,omitempty"` // one byte; "\t" or "tab" for tab
	Quote     string     `yaml:"quote,omitempty"`     // one byte, or "none"
	Escape    string     `yaml:"escape,omitempty"`    // one byte, or "none"
	Header    bool       `yaml:"header,omitempty"`    // first CSV line is a header
	Null      string     `yaml:"null,omitempty"`      // field text that means NULL
	Columns   string     `yaml:"columns,omitempty"`   // ImportTsv column spec, e.g. HBASE_ROW_KEY,d:name

	// Output.
	Table     string `yaml:"table,omitempty"`
	Out       string `yaml:"out,omitempty"`
	Timestamp int64  `yaml:"timestamp,omitempty"` // cell timestamp in ms; 0 = run start time

	// Region splits (at most one of splits, splits_from, split_uniform, split_by_salt, split_sample).
	Splits       string `yaml:"splits,omitempty"`        // file: one split key per line, toStringBinary
	SplitsFrom   string `yaml:"splits_from,omitempty"`   // HBase REST server URL: the live table's regions
	SplitUniform int    `yaml:"split_uniform,omitempty"` // number of regions, split uniformly over keyspace
	Keyspace     string `yaml:"keyspace,omitempty"`      // hex | decimal | bytes[:width] (split_uniform only)
	SplitBySalt  int    `yaml:"split_by_salt,omitempty"` // number of salt buckets
	SplitSample  int    `yaml:"split_sample,omitempty"`  // number of regions, split by sampling keys

	// HFile settings (defaults for every family; families: overrides per family).
	Compression   string `yaml:"compression,omitempty"` // none | gz | snappy | lz4 | zstd
	Bloom         string `yaml:"bloom,omitempty"`       // none | row | rowcol
	Encoding      string `yaml:"encoding,omitempty"`    // none | prefix | diff | fast_diff
	BlockSize     Size   `yaml:"block_size,omitempty"`
	FormatVersion int    `yaml:"format_version,omitempty"` // 2 or 3
	Labels        string `yaml:"labels,omitempty"`         // label=ordinal file for visibility tags
	Memory        Size   `yaml:"memory,omitempty"`         // hard memory budget
	MaxFileSize   Size   `yaml:"max_file_size,omitempty"`  // roll HFiles at this size

	// Row handling.
	Duplicates string `yaml:"duplicates,omitempty"`  // error | first | last | keep
	Rejects    string `yaml:"rejects,omitempty"`     // JSON Lines file for bad rows
	MaxRejects int64  `yaml:"max_rejects,omitempty"` // bad rows allowed before failing; -1 = unlimited
	Workers    int    `yaml:"workers,omitempty"`     // 0 = GOMAXPROCS
	TmpDir     string `yaml:"tmp_dir,omitempty"`     // local scratch for spill files; "" = in the staging dir (a bucket output: the system temp dir)
	JSON       bool   `yaml:"json,omitempty"`        // machine-readable output
	Reload     bool   `yaml:"reload,omitempty"`      // reload inputs that changed since they were loaded
	BreakLock  bool   `yaml:"break_lock,omitempty"`  // take over a bucket lock without a lease (lock_bucket.go)
	LockLease  string `yaml:"lock_lease,omitempty"`  // a bucket lock's lease, a Go duration (lock_lease.go); "" = 2m

	// MaxRecord bounds one CSV record (a quoted field that never closes is cut here and rejected);
	// 0 = 64 MiB, at most 1 GiB.
	MaxRecord Size `yaml:"max_record,omitempty"`

	// Job-file-only keys.
	Families    map[string]FamilyOptions `yaml:"families,omitempty"`
	Mapping     yaml.Node                `yaml:"mapping,omitempty"`   // decoded by pipeline.MappingConfig
	RowKey      yaml.Node                `yaml:"rowkey,omitempty"`    // decoded by the pipeline
	Aggregate   yaml.Node                `yaml:"aggregate,omitempty"` // decoded by AggregateRules (aggregate.go)
	StateDir    string                   `yaml:"state_dir,omitempty"`
	Incremental Incremental              `yaml:"incremental,omitempty"`

	// File is the job file this job came from ("" when built from flags only).
	// It is not a job-file key.
	File string `yaml:"-"`
}

// StringList is a list of strings that a job file may also give as a single
// scalar (`input: a.csv` = `input: [a.csv]`). A []string assigns to it.
type StringList []string

// UnmarshalYAML accepts a scalar or a sequence of scalars.
func (l *StringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.ShortTag() == "!!null" {
			*l = nil
			return nil
		}
		*l = StringList{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*l = list
	return nil
}

// FamilyOptions overrides the job-wide HFile settings for one column family.
type FamilyOptions struct {
	Compression string `yaml:"compression,omitempty"`
	Bloom       string `yaml:"bloom,omitempty"`
	Encoding    string `yaml:"encoding,omitempty"`
	BlockSize   Size   `yaml:"block_size,omitempty"`
}

// Incremental configures watermark tracking for incremental loads.
type Incremental struct {
	Watermark     string `yaml:"watermark,omitempty"`      // input column whose maximum is recorded per run
	WatermarkType string `yaml:"watermark_type,omitempty"` // string | number | time (default string)
}

// IsZero reports whether no incremental key was set (used by yaml omitempty).
func (i Incremental) IsZero() bool { return i == Incremental{} }

// MemoryBudget is the run's memory budget in bytes: memory, or 1 GiB when unset. The CLI sets the Go
// runtime's soft memory limit (GOMEMLIMIT) to it, so that garbage is collected before the process grows
// past the budget.
func (j *Job) MemoryBudget() int64 {
	if j.Memory > 0 {
		return int64(j.Memory)
	}
	return engine.DefaultMemory
}

// RunParent is the directory that holds a job run's output directories:
// <out>/<name>.
func (j *Job) RunParent() string { return joinOut(j.Out, j.Name) }

// Stage creates the staging area of a run of j: with state_dir, a run
// directory <out>/<name>/<runID> (NewRunStaging); without, the output
// directory out itself (NewStaging).
func (j *Job) Stage(runID string) (*Staging, error) {
	if j.StateDir != "" {
		return NewRunStaging(j.RunParent(), runID)
	}
	return NewStaging(j.Out, runID)
}

// OpenState opens the job's incremental state (state_dir must be set).
func (j *Job) OpenState() (*State, error) { return OpenState(j.StateDir, j.Name) }

// Family returns the effective options for family: its families: entry with
// unset fields filled from the job-wide settings.
func (j *Job) Family(name string) FamilyOptions {
	f := j.Families[name]
	if f.Compression == "" {
		f.Compression = j.Compression
	}
	if f.Bloom == "" {
		f.Bloom = j.Bloom
	}
	if f.Encoding == "" {
		f.Encoding = j.Encoding
	}
	if f.BlockSize == 0 {
		f.BlockSize = j.BlockSize
	}
	return f
}

// LoadJob reads a job file. In order it: parses the YAML; expands ${VAR} in
// every scalar value from env (an unset variable is an error naming it and its
// line; ${VAR:-default} gives a default; $$ is a literal $); rejects unknown
// keys with their line and a suggestion; decodes; applies sets ("key=value",
// dotted keys for nested ones, typed per the field, see Apply); and sets
// Name to the file's base name without extension when the file has none.
//
// LoadJob does not call Validate: command-line flags may still fill in
// required settings. Call Apply for flags, then Validate.
func LoadJob(path string, env func(string) (string, bool), sets []string) (*Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, classify(ErrConfig, fmt.Errorf("reading job file: %w", err))
	}
	j, err := ParseJob(filepath.Base(path), data, env)
	if err != nil {
		return nil, err
	}
	j.File = path
	if j.Name == "" {
		base := filepath.Base(path)
		j.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	ov := make(map[string]string, len(sets))
	var order []string
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, classify(ErrConfig, fmt.Errorf("--set %q: want key=value", s))
		}
		k = strings.TrimSpace(k)
		if _, dup := ov[k]; !dup {
			order = append(order, k)
		}
		ov[k] = v
	}
	for _, k := range order {
		if err := j.Set(k, ov[k]); err != nil {
			return nil, fmt.Errorf("--set %s=%s: %w", k, ov[k], err)
		}
	}
	return j, nil
}

// ParseJob parses job file text; name is used in error messages
// ("name:LINE: ..."). env may be nil (then any ${VAR} is an error).
func ParseJob(name string, data []byte, env func(string) (string, bool)) (*Job, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, classify(ErrConfig, fmt.Errorf("%s: empty job file", name))
		}
		return nil, classify(ErrConfig, errors.New(relineError(name, err)))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, classify(ErrConfig, fmt.Errorf("%s:%d: more than one YAML document in a job file", name, extra.Line))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, classify(ErrConfig, fmt.Errorf("%s:%d: a job file is a mapping of keys (table: ..., input: ...)", name, root.Line))
	}
	if err := expandNode(name, root, env); err != nil {
		return nil, classify(ErrConfig, err)
	}
	if err := checkKeys(name, root, reflect.TypeOf(Job{}), ""); err != nil {
		return nil, classify(ErrConfig, err)
	}
	var j Job
	if err := root.Decode(&j); err != nil {
		return nil, classify(ErrConfig, errors.New(relineError(name, err)))
	}
	return &j, nil
}

var lineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// relineError rewrites yaml.v3's "line N: msg" into "file:N: msg", one
// line per problem.
func relineError(name string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimPrefix(strings.TrimSpace(l), "yaml: ")
		if m := lineRE.FindStringSubmatch(l); m != nil {
			l = name + ":" + m[1] + ": " + m[2]
		} else {
			l = name + ": " + l
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// expandNode replaces ${VAR}, ${VAR:-default} and $$ in every scalar value
// (not in keys). Expansion happens on parsed values, so a variable holding
// ": " or "#" stays part of the value instead of changing the YAML structure.
// A plain (unquoted) scalar is re-typed after expansion, so
// `workers: ${N}` decodes as an integer.
func expandNode(name string, n *yaml.Node, env func(string) (string, bool)) error {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if err := expandNode(name, c, env); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if err := expandNode(name, n.Content[i], env); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "$") {
			return nil
		}
		v, err := expandString(n.Value, env)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, n.Line, err)
		}
		if v != n.Value {
			n.Value = v
			if n.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
				n.Tag = "" // re-resolve: the expanded text decides int/bool/string
			}
		}
	}
	return nil
}

func expandString(s string, env func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ in %q", s)
			}
			expr := s[i+2 : i+2+end]
			varName, def, hasDef := strings.Cut(expr, ":-")
			if !validEnvName(varName) {
				return "", fmt.Errorf("bad variable name %q in ${%s} (use $$ for a literal $)", varName, expr)
			}
			var val string
			var ok bool
			if env != nil {
				val, ok = env(varName)
			}
			if !ok || (hasDef && val == "") {
				if !hasDef {
					return "", fmt.Errorf("environment variable %s is not set (write ${%s:-default} for a default, $$ for a literal $)", varName, varName)
				}
				val = def
			}
			b.WriteString(val)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}

var nodeType = reflect.TypeOf(yaml.Node{})

// yamlKeys lists the job-file keys of a struct type in declaration order.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		k := yamlKey(t.Field(i))
		if k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

func yamlKey(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	k, _, _ := strings.Cut(tag, ",")
	if k == "" {
		k = strings.ToLower(f.Name)
	}
	return k
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if yamlKey(t.Field(i)) == key {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// checkKeys walks a mapping against the struct type t and reports the first
// unknown key by line, with the nearest known key as a suggestion. Keys under
// yaml.Node fields are decoded, and their keys checked, elsewhere: mapping and
// rowkey by the pipeline, aggregate by AggregateRules.
func checkKeys(name string, n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nodeType {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder reports the type error with its line
		}
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if prev, dup := seen[k.Value]; dup {
				return fmt.Errorf("%s:%d: key %q given twice (first at line %d)", name, k.Line, path+k.Value, prev)
			}
			seen[k.Value] = k.Line
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				// "<<: *defaults" merges an anchored mapping: check its keys.
				v := n.Content[i+1]
				targets := []*yaml.Node{v}
				if v.Kind == yaml.SequenceNode {
					targets = v.Content
				}
				for _, a := range targets {
					if a.Kind == yaml.AliasNode && a.Alias != nil {
						if err := checkKeys(name, a.Alias, t, path); err != nil {
							return err
						}
					}
				}
				continue
			}
			if k.Kind == yaml.ScalarNode {
				k.Tag = "!!str" // "null:" is the key null, not a YAML null
			}
			f, ok := fieldByKey(t, k.Value)
			if !ok {
				msg := fmt.Sprintf("%s:%d: unknown key %q", name, k.Line, path+k.Value)
				if s := suggestKey(k.Value, yamlKeys(t)); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", path+s)
				}
				return errors.New(msg)
			}
			if err := checkKeys(name, n.Content[i+1], f.Type, path+k.Value+"."); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && t.Key().Kind() == reflect.String && k.Tag != "!!merge" {
				k.Tag = "!!str" // a family may be called "1" or "true"
			}
			if err := checkKeys(name, n.Content[i+1], t.Elem(), path+n.Content[i].Value+"."); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for _, c := range n.Content {
			if err := checkKeys(name, c, t.Elem(), path); err != nil {
				return err
			}
		}
	}
	return nil
}

// suggestKey returns the job-file key closest to s ('-' read as '_', any case), or "" when nothing is close.
func suggestKey(s string, candidates []string) string {
	return suggest.Closest(strings.ToLower(strings.ReplaceAll(s, "-", "_")), candidates)
}

// Keys returns every job-file key, dotted for nested ones (sorted), e.g. for
// shell completion of --set.
func Keys() []string {
	var out []string
	t := reflect.TypeOf(Job{})
	for _, k := range yamlKeys(t) {
		f, _ := fieldByKey(t, k)
		switch {
		case f.Type.Kind() == reflect.Struct && f.Type != nodeType:
			for _, sub := range yamlKeys(f.Type) {
				out = append(out, k+"."+sub)
			}
		case f.Type.Kind() == reflect.Map:
			for _, sub := range yamlKeys(f.Type.Elem()) {
				out = append(out, k+".FAMILY."+sub)
			}
		default:
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Marshal renders the job as YAML (unset keys omitted). Deterministic:
// fields in declaration order, families sorted by name.
func (j *Job) Marshal() ([]byte, error) {
	b, err := yaml.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("marshal job: %w", err)
	}
	return b, nil
}

// Settings returns the job as a generic map (unset keys omitted) for the
// manifest; encoding/json sorts its keys, so the bytes are deterministic.
func (j *Job) Settings() (map[string]any, error) {
	b, err := j.Marshal()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("job settings: %w", err)
	}
	return normalizeYAML(m).(map[string]any), nil
}

// normalizeYAML turns map[any]any (possible for non-string YAML keys) into
// map[string]any so encoding/json accepts it.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeYAML(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalizeYAML(e)
		}
		return x
	default:
		return v
	}
}
