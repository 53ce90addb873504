package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hfload/hfload/internal/cli"
	"github.com/hfload/hfload/jobs"
)

func newAnalyzeCmd() *cobra.Command {
	var (
		sample  int64
		regions int
		html    string
	)
	cmd := &cobra.Command{
		Use:   "analyze [JOB.yaml] [run flags] [--sample N] [--regions N] [--json] [--html FILE]",
		Short: "Check a row-key design against the data before loading it",
		Long: `Maps the input exactly as 'hfload run' would (same job file and flags; --out and --table are not
needed) and reports, without writing any HFile:

  - duplicate row keys and duplicate cells (exact counts, with examples; a second read of the input
    confirms them when row-key fingerprints repeat),
  - cells and bytes per region under the job's split points (--splits, --splits-from, --split-uniform, --split-by-salt),
    empty and hot regions,
  - row keys that arrive in ascending order (a time or sequence leading the key: a write hotspot),
  - what row keys, family and qualifier names cost per value byte, and numbers stored as text,
  - suggested split points of equal bytes and the HBase shell command creating the table
    (for --regions N, else the job's --split-sample N or its number of regions).

Rejected rows are counted and reported, not fatal, unless the job sets a positive --max-rejects.
--sample N reads only the first N rows. --json prints the report as JSON (a stable contract: fields are
added, never renamed or removed).`,
		Args: cobra.MaximumNArgs(1),
	}
	jf := cli.AddJobFlags(cmd.Flags())
	cmd.Flags().Int64Var(&sample, "sample", 0, "analyze only the first N rows of the input (0 = all)")
	cmd.Flags().IntVar(&regions, "regions", 0, "compute the suggested split points for N regions")
	cmd.Flags().StringVar(&html, "html", "", "also write a self-contained HTML report to this file")
	// Accepted so that a run command line works with analyze in place of run; analyze has no progress
	// display and writes no HFiles to verify.
	var ignored bool
	for _, name := range []string{"no-progress", "no-verify"} {
		cmd.Flags().BoolVar(&ignored, name, false, "ignored (accepted for command lines written for run)")
		cmd.Flags().MarkHidden(name)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		job, err := jf.Load(args)
		if err != nil {
			return err
		}
		opts := jobs.AnalyzeOptions{Sample: sample, Regions: regions}
		var rejects *os.File
		if job.Rejects != "" { // only when asked: analyze writes no file by default
			if rejects, err = os.Create(job.Rejects); err != nil {
				return fmt.Errorf("%w: rejects file: %w", jobs.ErrIO, err)
			}
			defer rejects.Close() // error path only; closed and checked below
			opts.Rejects = rejects
		}
		rep, err := jobs.Analyze(cmd.Context(), job, opts)
		if err != nil {
			return err
		}
		if rejects != nil {
			if err := rejects.Close(); err != nil {
				return fmt.Errorf("%w: rejects file: %w", jobs.ErrIO, err)
			}
		}
		if html != "" {
			if err := writeHTMLReport(html, rep.WriteHTML); err != nil {
				return err
			}
		}
		out := cmd.OutOrStdout()
		if job.JSON {
			err = rep.WriteJSON(out)
		} else {
			err = rep.WriteText(out)
		}
		if err != nil {
			return fmt.Errorf("%w: %w", jobs.ErrIO, err)
		}
		return nil
	}
	return cmd
}

// writeHTMLReport writes the HTML report to path.
func writeHTMLReport(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%w: --html: %w", jobs.ErrIO, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%w: --html %s: %w", jobs.ErrIO, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%w: --html %s: %w", jobs.ErrIO, path, err)
	}
	return nil
}
