package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hfload/hfload/internal/cli"
	"github.com/hfload/hfload/jobs"
)

// Job commands: validate, plan and runs. Each takes a job file (flags and
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
		Args:  cobra.ExactArgs(1),
	}
	jf := cli.AddJobFlags(cmd.Flags())
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
		if job.JSON {
			if runs == nil {
				runs = []jobs.RunRecord{}
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(runs)
		}
		return jobs.WriteRuns(cmd.OutOrStdout(), runs)
	}
	return cmd
}
