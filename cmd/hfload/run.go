package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/hfload/hfload/internal/cli"
	"github.com/hfload/hfload/jobs"
)

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
	jf := cli.AddJobFlags(cmd.Flags())
	cmd.Flags().BoolVar(&noProgress, "no-progress", false, "no progress display")
	cmd.Flags().BoolVar(&noVerify, "no-verify", false, "skip checking every written HFile before commit (= --verify none)")
	cmd.Flags().StringVar(&verify, "verify", "stream", "check of every written HFile before commit: stream (checksums, index, totals of the bytes as written), blocks (the same, re-reading each file from disk), full (re-read, also every cell's order and bloom) or none")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		job, err := jf.Load(args)
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
		// Collect garbage when the heap nears the budget, and not before (the sorter accounts its own
		// memory within it; the limit bounds what it cannot see: freed index arrays, batches, buffers).
		defer collectAtBudget(job.MemoryBudget())()
		workers := 0
		if os.Getenv("GOMAXPROCS") == "" {
			// One processor more than cores, workers one per core: a goroutine in a direct write of
			// several milliseconds keeps its processor until the runtime takes it back, and with as
			// many processors as cores a core then idles (the write phase of the 1 GB benchmark took
			// 7.1-7.6 s with one more, 7.6-9.7 s without). Re-measured with GOGC off (collectAtBudget),
			// 1M customer-order rows, perf record, 5 alternating rounds: cores + 1 took 1,810 (5
			// regions) and 1,819 (1,000 regions) samples of CPU, cores alone 1,851 and 2,248.
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
