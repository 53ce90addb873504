package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hfload/hfload/jobs"
)

// JobFlags are the flags that set job-file keys, shared by every command that takes a job file: `hfload
// run`, `analyze`, `plan` and `validate` (cmd/hfload) and `hfload-beam`. This is their one definition: a
// command changes only the help of a flag whose meaning differs for it (SetUsage). Every flag the user
// sets explicitly overrides the job file through jobs.Job.Apply, the code path of --set.
type JobFlags struct {
	fs   *pflag.FlagSet
	sets []string
}

// AddJobFlags registers the job flags on f, with `hfload run`'s help texts.
func AddJobFlags(f *pflag.FlagSet) *JobFlags {
	jf := &JobFlags{fs: f}
	// Input side.
	f.StringArray("input", nil, "input file, glob or - for stdin (repeatable; also comma-separated)")
	f.String("format", "", "input format: csv or parquet (default: from the file extension)")
	f.String("dialect", "", "text export dialect: csv (default), postgres-text, postgres-csv, mysql, mysql-csv (README: Dialects)")
	f.String("separator", "", `CSV field separator, one character (default: the dialect's; "tab" or "\t" for tab)`)
	f.String("quote", "", `quote character, or none (default: the dialect's)`)
	f.String("escape", "", `escape character, or none (default: the dialect's; \ in postgres-text and mysql*)`)
	f.Bool("header", false, "skip the first line of each CSV file (and map columns by its names)")
	f.String("null", "", `unquoted field text that means NULL, e.g. \N or NULL (default: the dialect's; README: Dialects)`)
	f.String("columns", "", "ImportTsv column spec, e.g. HBASE_ROW_KEY,d:name,d:age,HBASE_TS_KEY")
	f.Int64("max-rejects", 0, "bad rows allowed before failing: 0 = fail on the first, -1 = unlimited")
	f.String("rejects", "", "JSON Lines file for rejected rows (default <out>/_rejects.jsonl)")
	f.String("max-record", "", "longest CSV record: a record (a quoted field that never closes) past it is rejected (default 64MiB, at most 1GiB)")
	f.Int("workers", 0, "parallel mapping workers (default: one per core)")
	// Output side.
	f.String("table", "", "HBase table name (used in the bulk-load command and manifest)")
	f.String("out", "", "output directory or s3://, gs://, azblob://bucket/prefix: <out>/<family>/<hfile> + _manifest.json")
	f.Int64("timestamp", 0, "cell timestamp in epoch ms (default: the run's start time)")
	f.String("splits", "", "file with one split key per line (HBase shell notation, \\xNN escapes)")
	f.String("splits-from", "", "HBase REST server URL, e.g. http://rest-host:8080: use the live --table's current regions")
	f.Int("split-uniform", 0, "N regions split uniformly over --keyspace")
	f.String("keyspace", "", "key space of --split-uniform: hex, decimal or bytes, optionally :width")
	f.Int("split-by-salt", 0, "one region per salt bucket (N buckets; row keys start with a salt byte)")
	f.Int("split-sample", 0, "N regions of equal bytes computed from the data")
	f.String("compression", "", "HFile compression: none, gz, snappy, lz4, zstd (default none)")
	f.String("bloom", "", "bloom filter: none, row, rowcol (default row)")
	f.String("encoding", "", "data block encoding: none, prefix, diff, fast_diff (default none)")
	f.String("block-size", "", "HFile block size (default 64KiB)")
	f.Int("format-version", 0, "HFile format version: 3 (HBase 2.x, default) or 2")
	f.String("labels", "", "label=ordinal file (the ordinals of hbase:labels) for a visibility column / HBASE_CELL_VISIBILITY")
	f.String("memory", "", "memory budget of the run (default 1GiB): the sorter gets all but 48MiB; also sets GOMEMLIMIT")
	f.String("max-file-size", "", "roll HFiles at this size, at row boundaries (default 10GiB)")
	f.String("duplicates", "", "cells with equal keys: error (default), first, last or keep")
	f.String("state-dir", "", "state directory for incremental runs (local)")
	f.String("tmp-dir", "", "local scratch directory for spill files (default: inside the output's staging directory; the system temp dir when --out is s3://)")
	f.Bool("reload", false, "reload inputs that changed since an earlier run loaded them")
	f.Bool("break-lock", false, "take over a bucket output's lock that has no lease (left by an older hfload) once unchanged for 2m; refused while fresh")
	f.String("lock-lease", "", "lease of a bucket output's lock: renewed every quarter of it, taken over by another run once not renewed for it (default 2m, at least 30s; README: Bucket locks and leases)")
	f.Bool("json", false, "print the summary as JSON")
	f.StringArrayVar(&jf.sets, "set", nil, "override a job-file key: key=value (repeatable; dotted keys for nested ones)")
	return jf
}

// SetUsage replaces the help text of job flag name, for a command where the flag means something more
// specific (hfload-beam: --workers per task). It reports an unknown name as an error.
func (jf *JobFlags) SetUsage(name, usage string) error {
	f := jf.fs.Lookup(name)
	if f == nil {
		return fmt.Errorf("cli: no job flag --%s", name)
	}
	f.Usage = usage
	return nil
}

// Load builds the job as `hfload run` does: the job file (if any), then --set, then explicit flags.
func (jf *JobFlags) Load(args []string) (*jobs.Job, error) {
	var job *jobs.Job
	if len(args) > 0 {
		j, err := jobs.LoadJob(args[0], os.LookupEnv, jf.sets)
		if err != nil {
			return nil, err
		}
		job = j
	} else {
		job = &jobs.Job{}
		for _, s := range jf.sets {
			k, v, ok := strings.Cut(s, "=")
			if !ok {
				return nil, fmt.Errorf("%w: --set %q: want key=value", jobs.ErrConfig, s)
			}
			if err := job.Set(k, v); err != nil {
				return nil, err
			}
		}
	}
	overrides := map[string]string{}
	var inputs []string
	isKey := map[string]bool{}
	for _, k := range jobs.Keys() {
		isKey[k] = true
	}
	jf.fs.Visit(func(f *pflag.Flag) {
		switch {
		case f.Name == "input":
			vals, _ := jf.fs.GetStringArray("input")
			for _, v := range vals {
				inputs = append(inputs, strings.Split(v, ",")...)
			}
		case isKey[strings.ReplaceAll(f.Name, "-", "_")]:
			overrides[f.Name] = f.Value.String()
		}
	})
	if err := job.Apply(overrides); err != nil {
		return nil, err
	}
	if len(inputs) > 0 {
		job.Input = inputs
	}
	return job, nil
}
