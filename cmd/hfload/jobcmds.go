package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hfload/hfload/internal/cli"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
)

// Job commands: validate, plan, runs and status. Each takes a job file (flags and
// --set override it as for run); the work is in the jobs package.

func newValidateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate JOB.yaml [flags]",
		Short: "Check a job file without reading any data",
		Long: `Checks the job file: keys and values, the mapping (compiled), per-family settings and the split
points (a splits file is read). Inputs are not opened. Prints OK, or every problem with its line in the
job file, and exits 1.`,
		Args: cobra.ExactArgs(1),
	}
	jf := cli.AddJobFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		job, err := jf.Load(args)
		if err == nil {
			err = jobs.CheckJob(job)
		}
		if err != nil {
			fmt.Fprintf(cmd.OutOrStdout(), "%s: invalid\n%v\n", args[0], err)
			return exitError{code: jobs.ExitUsage}
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: OK (job %s)\n", args[0], job.Name)
		return nil
	}
	return cmd
}

func newPlanCmd() *cobra.Command {
	var sample int
	cmd := &cobra.Command{
		Use:   "plan JOB.yaml [flags]",
		Short: "Show what a run would do, from a sample of the data",
		Long: `Reads the first --sample rows of the inputs a run would load, maps them, and prints: the inputs to
load or skip (incremental jobs), the regions with the cells, bytes and HFiles expected in each
(extrapolated from the sample's bytes per row to the input sizes; uncompressed KeyValue bytes), the first
row keys, rejected rows and duplicate keys in the sample, and warnings. Writes nothing.`,
		Args: cobra.ExactArgs(1),
	}
	jf := cli.AddJobFlags(cmd.Flags())
	cmd.Flags().IntVar(&sample, "sample", 10000, "rows to read, over all inputs")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		job, err := jf.Load(args)
		if err != nil {
			return err
		}
		rp, err := jobs.PlanJob(cmd.Context(), job, jobs.PlanOptions{Sample: sample})
		if err != nil {
			return err
		}
		if job.JSON {
			return rp.WriteJSON(cmd.OutOrStdout())
		}
		return rp.WriteText(cmd.OutOrStdout())
	}
	return cmd
}

func newRunsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs JOB.yaml [flags]",
		Short: "List the recorded runs of an incremental job",
		Long: `Lists the runs recorded in the job's state_dir, oldest first (--json: every field). Then, as
hfload status does, the job's locks: the state's, and for an output in a bucket its lock object's holder
and lease. --json prints the runs only, as a list; --json --locks prints {"runs": [...], "locks": [...]},
the locks as hfload status --json prints them.`,
		Args: cobra.ExactArgs(1),
	}
	jf := cli.AddJobFlags(cmd.Flags())
	withLocks := cmd.Flags().Bool("locks", false, `with --json: print {"runs": [...], "locks": [...]} instead of the runs alone`)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		job, err := jf.Load(args)
		if err != nil {
			return err
		}
		if job.StateDir == "" {
			return fmt.Errorf("%w: job %s has no state_dir: its runs are not recorded", jobs.ErrConfig, job.Name)
		}
		st, err := job.OpenState()
		if err != nil {
			return err
		}
		runs, err := st.Runs()
		if err != nil {
			return err
		}
		if *withLocks && !job.JSON {
			return fmt.Errorf("%w: --locks goes with --json (the table is followed by the locks anyway)", jobs.ErrConfig)
		}
		if job.JSON && !*withLocks {
			return writeJSON(cmd, nonNil(runs))
		}
		now := time.Now()
		locks, err := job.Locks(cmd.Context(), now)
		if err != nil {
			return err
		}
		if job.JSON {
			return writeJSON(cmd, struct {
				Runs  []jobs.RunRecord  `json:"runs"`
				Locks []jobs.LockStatus `json:"locks"`
			}{nonNil(runs), nonNil(locks)})
		}
		if err := jobs.WriteRuns(cmd.OutOrStdout(), runs); err != nil {
			return err
		}
		return jobs.WriteLocks(cmd.OutOrStdout(), locks, now)
	}
	return cmd
}

func newStatusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status JOB.yaml [flags]",
		Short: "Show who holds a job's locks",
		Long: `Shows the job's locks without taking them: the state's lock (state_dir: held while a run of the job
runs), and for an output in a bucket (s3://, gs://, azblob://) the lock object of its prefix
(<out>/<job>/.hfload.lock for an incremental job, <out>/.hfload.lock otherwise): the holder (pid, host,
start, purpose), its lease, when the server last stored it and when the lease runs out, judged by this
host's clock as a run taking the lock over judges it. A job without a file takes --out (and --state-dir).`,
		Args: cobra.MaximumNArgs(1),
	}
	jf := cli.AddJobFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		job, err := jf.Load(args)
		if err != nil {
			return err
		}
		if job.StateDir == "" && !storage.IsRemote(job.Out) {
			return fmt.Errorf("%w: status shows the lock of a state_dir or of an output in a bucket; job %s has neither", jobs.ErrConfig, job.Name)
		}
		now := time.Now()
		locks, err := job.Locks(cmd.Context(), now)
		if err != nil {
			return err
		}
		if job.JSON {
			return writeJSON(cmd, locks)
		}
		return jobs.WriteLocks(cmd.OutOrStdout(), locks, now)
	}
	return cmd
}

// writeJSON prints v as indented JSON.
func writeJSON(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// nonNil is s, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
