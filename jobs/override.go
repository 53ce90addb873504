package jobs

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var sizeType = reflect.TypeOf(Size(0))

// Apply sets several keys (see Set), in sorted key order so the first error
// reported is deterministic. The command line uses it for flags given
// explicitly: {"max-file-size": "2GiB", "workers": "4"} — flag names with '-'
// and job-file keys with '_' are both accepted. List values are split on
// ','; to keep paths containing commas intact, assign Job.Input directly.
func (j *Job) Apply(overrides map[string]string) error {
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := j.Set(k, overrides[k]); err != nil {
			return err
		}
	}
	return nil
}

// Set overrides one key, the --set key=value code path. Keys are job-file
// keys ('-' accepted for '_'), dotted for nested ones:
//
//	table=t2                      strings are taken verbatim
//	workers=4  header=true        numbers and booleans are parsed per the field
//	memory=2GiB                   sizes as in ParseSize
//	input=a.csv,b/*.csv           lists split on ','
//	families.d.compression=gz     map entries: families.NAME.KEY (NAME may contain '.')
//	incremental.watermark=ts
//	mapping.timestamp.column=ts   inside mapping/rowkey/aggregate: the value is YAML
//	rowkey=[id, ts]               a whole yaml.Node key: the value is YAML
func (j *Job) Set(key, value string) error {
	segs := strings.Split(key, ".")
	for _, s := range segs {
		if s == "" {
			return classify(ErrConfig, fmt.Errorf("key %q: empty segment", key))
		}
	}
	if err := setPath(reflect.ValueOf(j).Elem(), segs, "", value); err != nil {
		return classify(ErrConfig, err)
	}
	return nil
}

func normKey(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }

func setPath(v reflect.Value, segs []string, path, value string) error {
	t := v.Type()
	if t == nodeType {
		n := v.Addr().Interface().(*yaml.Node)
		return setNodePath(n, segs, path, value)
	}
	if len(segs) == 0 {
		return setLeaf(v, strings.TrimSuffix(path, "."), value)
	}
	switch t.Kind() {
	case reflect.Struct:
		k := normKey(segs[0])
		f, ok := fieldByKey(t, k)
		if !ok {
			msg := fmt.Sprintf("unknown key %q", path+segs[0])
			if s := suggestKey(segs[0], yamlKeys(t)); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", path+s)
			}
			return fmt.Errorf("%s", msg)
		}
		return setPath(v.FieldByIndex(f.Index), segs[1:], path+k+".", value)
	case reflect.Map:
		et := t.Elem()
		nameSegs := segs
		var rest []string
		if et.Kind() == reflect.Struct && et != nodeType {
			if len(segs) < 2 {
				return fmt.Errorf("key %q: want %sNAME.KEY (KEY one of %s)", path+strings.Join(segs, "."), path, strings.Join(yamlKeys(et), ", "))
			}
			nameSegs, rest = segs[:len(segs)-1], segs[len(segs)-1:]
		}
		name := strings.Join(nameSegs, ".")
		if v.IsNil() {
			v.Set(reflect.MakeMap(t))
		}
		elem := reflect.New(et).Elem()
		if cur := v.MapIndex(reflect.ValueOf(name)); cur.IsValid() {
			elem.Set(cur)
		}
		if err := setPath(elem, rest, path+name+".", value); err != nil {
			return err
		}
		v.SetMapIndex(reflect.ValueOf(name), elem)
		return nil
	default:
		return fmt.Errorf("key %q: %q has no sub-keys", path+strings.Join(segs, "."), strings.TrimSuffix(path, "."))
	}
}

func setLeaf(v reflect.Value, key, value string) error {
	t := v.Type()
	switch {
	case t == sizeType:
		n, err := ParseSize(value)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		v.SetInt(n)
	case t.Kind() == reflect.String:
		v.SetString(value)
	case t.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("%s: %q is not true or false", key, value)
		}
		v.SetBool(b)
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, t.Bits())
		if err != nil {
			return fmt.Errorf("%s: %q is not an integer", key, value)
		}
		v.SetInt(n)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		var list []string
		for _, p := range strings.Split(value, ",") {
			if p = strings.TrimSpace(p); p != "" {
				list = append(list, p)
			}
		}
		v.Set(reflect.ValueOf(list).Convert(t))
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		// A whole nested value as YAML, e.g. incremental={watermark: ts}.
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
			return fmt.Errorf("%s: value is not YAML: %w", key, err)
		}
		if len(doc.Content) == 0 {
			v.Set(reflect.Zero(t))
			return nil
		}
		if err := checkKeys("--set "+key, doc.Content[0], t, key+"."); err != nil {
			return err
		}
		nv := reflect.New(t)
		if err := doc.Content[0].Decode(nv.Interface()); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		v.Set(nv.Elem())
	default:
		return fmt.Errorf("%s: cannot be set from the command line", key)
	}
	return nil
}

// setNodePath sets path segs inside a free-form YAML node (mapping, rowkey,
// aggregate) to value parsed as YAML, creating mappings as needed.
func setNodePath(n *yaml.Node, segs []string, path, value string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		return fmt.Errorf("%s: value is not YAML: %w", path+strings.Join(segs, "."), err)
	}
	val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}
	if len(doc.Content) == 1 {
		val = doc.Content[0]
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if len(segs) == 0 {
		if val.ShortTag() == "!!null" || (val.Kind == yaml.ScalarNode && val.Value == "" && val.Style == 0) {
			*n = yaml.Node{} // --set mapping= clears it
			return nil
		}
		*n = *val
		return nil
	}
	cur := n
	for i, s := range segs {
		if cur.Kind == 0 {
			*cur = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		if cur.Kind != yaml.MappingNode {
			return fmt.Errorf("key %q: %q is not a mapping", path+strings.Join(segs, "."), path+strings.Join(segs[:i], "."))
		}
		var next *yaml.Node
		for k := 0; k+1 < len(cur.Content); k += 2 {
			if cur.Content[k].Value == s {
				next = cur.Content[k+1]
			}
		}
		if next == nil {
			next = &yaml.Node{}
			cur.Content = append(cur.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}, next)
		}
		if i == len(segs)-1 {
			*next = *val
			return nil
		}
		cur = next
	}
	return nil
}
