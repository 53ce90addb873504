package cli

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/hfload/hfload/jobs"
)

// TestEveryJobFlagSetsItsKey: every job flag but --input and --set names a job-file key (Load passes
// only those to jobs.Job.Apply: a flag without a key would be dropped without a word), and setting it on
// the command line changes the job Load builds.
func TestEveryJobFlagSetsItsKey(t *testing.T) {
	isKey := map[string]bool{}
	for _, k := range jobs.Keys() {
		isKey[k] = true
	}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	AddJobFlags(fs)
	values := map[string]string{ // a valid value per flag type, or per flag where the type is not enough
		"string": "x", "int": "3", "int64": "7", "bool": "true",
		"format": "parquet", "dialect": "mysql", "separator": ";", "quote": "'", "escape": "\\", "columns": "HBASE_ROW_KEY,d:a",
		"max-record": "1MiB", "keyspace": "hex", "compression": "gz", "bloom": "rowcol", "encoding": "diff",
		"block-size": "4KiB", "format-version": "2", "memory": "256MiB", "max-file-size": "1GiB", "duplicates": "last",
		"lock-lease": "90s",
	}
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "input" || f.Name == "set" {
			return
		}
		n++
		if !isKey[strings.ReplaceAll(f.Name, "-", "_")] {
			t.Errorf("--%s names no job-file key: Load would ignore it", f.Name)
			return
		}
		v, ok := values[f.Name]
		if !ok {
			v = values[f.Value.Type()]
		}
		fresh := pflag.NewFlagSet("y", pflag.ContinueOnError)
		jf := AddJobFlags(fresh)
		base, err := jf.Load(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := fresh.Parse([]string{"--" + f.Name + "=" + v}); err != nil {
			t.Fatalf("--%s=%s: %v", f.Name, v, err)
		}
		job, err := jf.Load(nil)
		if err != nil {
			t.Errorf("--%s=%s: %v", f.Name, v, err)
			return
		}
		if jobString(t, job) == jobString(t, base) {
			t.Errorf("--%s=%s leaves the job as it was", f.Name, v)
		}
	})
	if n < 30 {
		t.Fatalf("only %d job flags", n)
	}
}

// TestSetUsage: a command may reword a job flag's help, not invent a flag.
func TestSetUsage(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	jf := AddJobFlags(fs)
	if err := jf.SetUsage("workers", "per task"); err != nil || fs.Lookup("workers").Usage != "per task" {
		t.Fatalf("SetUsage: %v", err)
	}
	if err := jf.SetUsage("no-such-flag", "x"); err == nil {
		t.Fatal("SetUsage accepted an unknown flag")
	}
}

func jobString(t *testing.T, j *jobs.Job) string {
	t.Helper()
	b, err := j.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
