package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hfload/hfload/jobs"
)

// jobFlags registers one flag per job-file key shared by run, analyze, plan and validate. Every flag the
// user sets explicitly overrides the job file through jobs.Job.Apply, the same code path as --set.
type jobFlags struct {
	fs   *pflag.FlagSet
	sets []string
}

func addJobFlags(cmd *cobra.Command) *jobFlags {
	f := cmd.Flags()
	jf := &jobFlags{fs: f}
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
	f.Int("workers", 0, "parallel mapping workers (default: one per core)")
	// Output side.
	f.String("table", "", "HBase table name (used in the bulk-load command and manifest)")
	f.String("out", "", "output directory or s3://bucket/prefix: <out>/<family>/<hfile> + _manifest.json")
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
	f.Bool("json", false, "print the summary as JSON")
	f.StringArrayVar(&jf.sets, "set", nil, "override a job-file key: key=value (repeatable; dotted keys for nested ones)")
	return jf
}

// load builds the job: the job file (if any), then --set, then explicitly given flags.
func (jf *jobFlags) load(args []string) (*jobs.Job, error) {
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
			return
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

func newRunCmd() *cobra.Command {
	var noProgress, noVerify bool
	var verify string
	cmd := &cobra.Command{
		Use:   "run [JOB.yaml] [flags]",
		Short: "Load CSV/Parquet exports into bulk-loadable HFiles",
		Long: `Reads the inputs, maps each row to cells, routes the cells to regions, sorts them within the memory
budget and writes <out>/<family>/<hfile> plus <out>/_manifest.json, then prints the completebulkload command.

Give a job file, flags, or both (flags override the job file). Output is staged and renamed into place
only when every file is complete and verified.`,
		Args: cobra.MaximumNArgs(1),
		RunE: nil,
	}
	jf := addJobFlags(cmd)
	cmd.Flags().BoolVar(&noProgress, "no-progress", false, "no progress display")
	cmd.Flags().BoolVar(&noVerify, "no-verify", false, "skip checking every written HFile before commit (= --verify none)")
	cmd.Flags().StringVar(&verify, "verify", "stream", "check of every written HFile before commit: stream (checksums, index, totals of the bytes as written), blocks (the same, re-reading each file from disk), full (re-read, also every cell's order and bloom) or none")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		job, err := jf.load(args)
		if err != nil {
			return err
		}
		mode, err := jobs.ParseVerifyMode(verify)
		if err != nil {
			return exitError{code: jobs.ExitUsage, err: fmt.Errorf("--verify: %w", err)}
		}
		if noVerify {
			mode = jobs.VerifyNone
		}
		if os.Getenv("GOMEMLIMIT") == "" {
			// Collect garbage before the heap outgrows the budget (the sorter accounts its own memory
			// within it; this bounds what it cannot see: freed index arrays, batches, buffers).
			debug.SetMemoryLimit(job.MemoryBudget())
		}
		workers := 0
		if os.Getenv("GOMAXPROCS") == "" {
			// One processor more than cores, workers one per core: a goroutine in a direct write of
			// several milliseconds keeps its processor until the runtime takes it back, and with as
			// many processors as cores a core then idles (the write phase of the 1 GB benchmark took
			// 7.1-7.6 s with one more, 7.6-9.7 s without).
			workers = defaultProcs
			runtime.GOMAXPROCS(workers + 1)
		}
		prog := newProgress(cmd.ErrOrStderr(), noProgress || job.JSON)
		res, err := jobs.Execute(cmd.Context(), job, jobs.ExecuteOptions{
			Progress:       prog.update,
			Verify:         mode,
			DefaultWorkers: workers,
			Log:            prog.log,
		})
		prog.done()
		if res != nil {
			printRunResult(cmd.OutOrStdout(), res, job.JSON)
		}
		return err
	}
	return cmd
}

// defaultProcs is the runtime's own GOMAXPROCS (cores, or the container's CPU limit), read once at start
// so that running the command more than once in a process (tests) does not raise it again.
var defaultProcs = runtime.GOMAXPROCS(0)

func printRunResult(w io.Writer, res *jobs.ExecuteResult, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(res)
		return
	}
	fmt.Fprint(w, res.Summary())
}
