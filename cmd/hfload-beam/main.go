// Command hfload-beam runs an hfload job on Apache Beam: the same job files, flags, output layout,
// manifest and commit as `hfload run`, the load itself as a Beam pipeline (internal/beamrun) on Prism,
// Flink, Spark or any portable runner (Dataflow with -tags dataflow). See docs/distributed.md.
//
//	hfload-beam JOB.yaml [run flags] [--runner prism|universal|flink|spark|dataflow] [Beam pipeline options]
//
// Flags that are not hfload's (--endpoint, --environment_type, --environment_config, --job_name, ...)
// are Beam's. The binary is also the pipeline's worker: a runner starts it with --worker.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/spf13/pflag"

	"github.com/hfload/hfload/internal/beamrun"
	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/cli"
	"github.com/hfload/hfload/jobs"
)

func main() {
	for _, a := range os.Args[1:] {
		if a == "--worker" || strings.HasPrefix(a, "--worker=") || a == "-worker" || strings.HasPrefix(a, "-worker=") {
			// Started by a runner as the pipeline's SDK worker: Beam's harness takes over and exits.
			flag.Parse()
			beam.Init()
			return
		}
	}
	// The SDK leaves a placeholder file in the temporary directory for every in-process pipeline
	// (beamrun.PrivateTempDir): the run gets a directory of its own, removed before it exits.
	cleanup, err := beamrun.PrivateTempDir()
	if err != nil {
		os.Exit(fail(os.Stderr, fmt.Errorf("%w: %w", jobs.ErrIO, err)))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	cleanup()
	os.Exit(code)
}

const usage = `usage: hfload-beam [JOB.yaml] [hfload run flags] [--runner NAME] [Beam pipeline options]

Runs the job as a Beam pipeline: inputs and --out must be on storage every worker reads and writes
at the same paths (a shared file system, or s3:// with the S3 endpoint and credentials in every
worker's environment). Runners: prism (default; in process unless --endpoint is given),
universal (any portable job server: --endpoint host:port), flink, spark, dataflow (built with
-tags dataflow). Beam options such as --endpoint, --environment_type, --environment_config,
--job_name are passed to Beam.
`

// run is the command: split the arguments into hfload's and Beam's, build the job, execute it with the
// Beam loader, print the summary as hfload run does. It returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("hfload-beam", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	jf := cli.AddJobFlags(fs)
	for name, usage := range map[string]string{ // where a flag means something more specific here
		"workers": "parallel mapping workers per task (default: one per core of the worker)",
		"out":     "output directory: <out>/<family>/<hfile> + _manifest.json (shared by all workers)",
		"memory":  "memory budget of each task (default 1GiB)",
	} {
		if err := jf.SetUsage(name, usage); err != nil {
			return fail(stderr, err)
		}
	}
	runner := fs.String("runner", "prism", "Beam runner: prism, universal, flink, spark (dataflow with -tags dataflow); local: the same tasks one after the other in this process, without Beam")
	verify := fs.String("verify", "stream", "check of every written HFile before commit: stream, blocks, full or none")
	noVerify := fs.Bool("no-verify", false, "= --verify none")
	reduceSize := fs.String("reduce-size", "", "run-file bytes of one region and family one reduce task takes; larger ones are cut into sub-ranges, each its own HFiles, at most 32 (default: the job's max_file_size)")
	csvUnitSize := fs.String("csv-unit-size", "0", "cut uncompressed CSV files larger than this into work units of this size, each its own map task (0: one task per file); a quoted line break across a cut costs a second pass without that cut")
	shuffle := fs.String("shuffle", beamtask.ShuffleFiles, "how maps hand records to reducers: files (run files on the shared storage, only their names through Beam's shuffle) or beam (the records through Beam's GroupByKey; no sub-ranges; see docs/distributed.md)")
	noMapCombine := fs.Bool("no-map-combine", false, "an aggregate: job's maps do not fold equal keys before the shuffle (they do by default, except for a sum of doubles); the reducers fold them all")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the launcher's process to this file (with Prism in process: the whole pipeline)")
	fs.MarkHidden("cpuprofile")
	fs.Bool("no-progress", false, "accepted for hfload run compatibility (hfload-beam shows no progress bars)")
	mine, beamArgs := splitArgs(fs, args)
	if err := fs.Parse(mine); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return jobs.ExitUsage
	}
	if err := flag.CommandLine.Parse(beamArgs); err != nil {
		fmt.Fprintf(stderr, "hfload-beam: Beam options: %v\n", err)
		return jobs.ExitUsage
	}
	if fs.NArg() > 1 || flag.CommandLine.NArg() > 0 {
		fmt.Fprintf(stderr, "hfload-beam: one job file at most, got %v\n", append(fs.Args(), flag.CommandLine.Args()...))
		return jobs.ExitUsage
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fail(stderr, fmt.Errorf("%w: --cpuprofile: %w", jobs.ErrIO, err))
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(stderr, fmt.Errorf("--cpuprofile: %w", err))
		}
		defer pprof.StopCPUProfile()
	}
	if err := defaultWorkerBinary(); err != nil {
		return fail(stderr, err)
	}
	beam.Init()
	job, err := jf.Load(fs.Args())
	if err != nil {
		return fail(stderr, err)
	}
	mode, err := jobs.ParseVerifyMode(*verify)
	if err != nil {
		return fail(stderr, fmt.Errorf("%w: --verify: %w", jobs.ErrConfig, err))
	}
	if *noVerify {
		mode = jobs.VerifyNone
	}
	run := beamrun.Runner(*runner)
	if *runner == "local" {
		run = beamtask.RunLocal
	}
	started := time.Now()
	var stats *beamtask.Stats
	bo := beamtask.Options{Stats: func(s *beamtask.Stats) { stats = s }, NoMapCombine: *noMapCombine}
	if bo.Shuffle, err = beamtask.ParseShuffle(*shuffle); err != nil {
		return fail(stderr, err)
	}
	if *reduceSize != "" {
		if bo.ReduceSize, err = jobs.ParseSize(*reduceSize); err != nil || bo.ReduceSize <= 0 {
			return fail(stderr, fmt.Errorf("%w: --reduce-size %q: want a size such as 2GiB (%v)", jobs.ErrConfig, *reduceSize, err))
		}
	}
	if bo.CSVUnitSize, err = jobs.ParseSize(*csvUnitSize); err != nil || bo.CSVUnitSize < 0 {
		return fail(stderr, fmt.Errorf("%w: --csv-unit-size %q: want a size such as 256MiB, or 0 (%v)", jobs.ErrConfig, *csvUnitSize, err))
	}
	res, err := jobs.Execute(ctx, job, jobs.ExecuteOptions{
		Verify:     mode,
		Now:        func() time.Time { return started },
		Log:        func(s string) { fmt.Fprintln(stderr, s) },
		Load:       beamtask.Loader(job, started, run, bo),
		LoadBucket: beamtask.BucketLoader(job, started, run, bo),
	})
	if res != nil {
		if job.JSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			enc.Encode(struct {
				*jobs.ExecuteResult
				Beam *beamtask.Stats `json:"beam,omitempty"`
			}{res, stats})
		} else {
			fmt.Fprint(stdout, res.Summary())
			if stats != nil && stats.Shuffle == beamtask.ShuffleBeam {
				fmt.Fprintf(stdout, "beam           %d units, %d reduce tasks (one per region·family), %d records (%d bytes) through Beam's shuffle\n",
					stats.Units, stats.ReduceTasks, stats.RunRecords, stats.RunBytes)
			} else if stats != nil {
				fmt.Fprintf(stdout, "beam           %d units, %d reduce tasks (%d regions·families, %d cut into sub-ranges), %d run files (%d bytes) through shared storage\n",
					stats.Units, stats.ReduceTasks, stats.Targets, stats.SubRanged, stats.RunFiles, stats.RunBytes)
			}
			if stats != nil && stats.MapCombined > 0 {
				fmt.Fprintf(stdout, "map combine    %d cells folded by the maps before the shuffle\n", stats.MapCombined)
			}
		}
	}
	if err != nil {
		return fail(stderr, err)
	}
	return 0
}

// defaultWorkerBinary makes this binary the pipeline's worker when the workers are not in process
// (the Go SDK would otherwise try to compile the program from source with the go command).
func defaultWorkerBinary() error {
	if *jobopts.WorkerBinary != "" || jobopts.IsLoopback() {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("%w: the worker binary (this program): %w", jobs.ErrConfig, err)
	}
	*jobopts.WorkerBinary = self
	return nil
}

func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "hfload-beam: %v\n", err)
	return jobs.ExitCode(err)
}

// splitArgs separates hfload's arguments (flags fs knows, and the job file) from Beam's (every other
// flag, with its value when it takes one).
func splitArgs(fs *pflag.FlagSet, args []string) (mine, beamArgs []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			mine = append(mine, a)
			continue
		}
		if a == "--" {
			mine = append(mine, args[i:]...)
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := fs.Lookup(name); f != nil || name == "help" || name == "h" {
			mine = append(mine, a)
			if f != nil && !hasValue && f.NoOptDefVal == "" && i+1 < len(args) {
				mine = append(mine, args[i+1])
				i++
			}
			continue
		}
		beamArgs = append(beamArgs, a)
		if bf := flag.CommandLine.Lookup(name); bf != nil && !hasValue && i+1 < len(args) {
			if b, ok := bf.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				beamArgs = append(beamArgs, args[i+1])
				i++
			}
		}
	}
	return mine, beamArgs
}
