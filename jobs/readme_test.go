package jobs

import (
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hfload/hfload/pipeline"
)

// Every YAML snippet in the README is a real job-file fragment: its mapping compiles and a whole job
// file parses. Documentation that drifts from the code fails here.
func TestREADMEYAMLSnippets(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```yaml\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("found %d yaml blocks in README.md", len(blocks))
	}
	n := 0
	for _, b := range blocks {
		b = b[:strings.Index(b, "```")]
		for _, doc := range strings.Split(b, "\n---\n") {
			var probe map[string]any
			if err := yaml.Unmarshal([]byte(doc), &probe); err != nil {
				t.Fatalf("README yaml does not parse: %v\n%s", err, doc)
			}
			if _, whole := probe["table"]; whole {
				env := func(string) (string, bool) { return "20261122", true }
				job, err := ParseJob("README.md", []byte(doc), env)
				if err != nil {
					t.Fatalf("README job file: %v\n%s", err, doc)
				}
				cfg, err := job.MappingConfig()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := pipeline.Compile(cfg); err != nil {
					t.Fatalf("README job mapping: %v\n%s", err, doc)
				}
				n++
				continue
			}
			if _, ok := probe["mapping"]; ok {
				job, err := ParseJob("README.md", []byte(doc), func(string) (string, bool) { return "", false })
				if err != nil {
					t.Fatalf("README mapping: %v\n%s", err, doc)
				}
				cfg, err := job.MappingConfig()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := pipeline.Compile(cfg); err != nil {
					t.Fatalf("README mapping does not compile: %v\n%s", err, doc)
				}
				n++
			}
		}
	}
	if n < 4 {
		t.Fatalf("checked %d snippets, want at least 4", n)
	}
}
