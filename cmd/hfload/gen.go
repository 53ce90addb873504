package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hfload/hfload/internal/gen"
	"github.com/hfload/hfload/jobs"
)

func newGenCmd() *cobra.Command {
	var (
		opts           gen.Options
		size, out, sep string
		list, noHeader bool
	)
	cmd := &cobra.Command{
		Use:   "gen DATASET [flags]",
		Short: "Generate a realistic relational export (orders, logs, metrics) for demos and benchmarks",
		Long: `Generates a deterministic (seeded) export as CSV or Parquet, streaming, so it can make files of
any size. Datasets: ` + datasetNames() + `. Use --list to see their columns.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if list {
				return nil
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				for _, d := range gen.Datasets() {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", d.Name, d.Description)
					for _, c := range d.Columns {
						fmt.Fprintf(cmd.OutOrStdout(), "  %-12s %-14s %s\n", c.Name, c.Type, c.Note)
					}
				}
				return nil
			}
			opts.Dataset = args[0]
			if size != "" {
				n, err := jobs.ParseSize(size)
				if err != nil {
					return fmt.Errorf("%w: --size: %w", jobs.ErrConfig, err)
				}
				opts.TargetBytes = n
			}
			if opts.Rows == 0 && opts.TargetBytes == 0 {
				opts.Rows = 100000
			}
			if sep != "" {
				b, err := jobs.SeparatorByte(sep)
				if err != nil {
					return fmt.Errorf("%w: --separator: %w", jobs.ErrConfig, err)
				}
				opts.Separator = b
			}
			opts.Header = !noHeader
			w := cmd.OutOrStdout()
			var f *os.File
			if out != "" && out != "-" {
				var err error
				if f, err = os.Create(out); err != nil {
					return fmt.Errorf("%w: %w", jobs.ErrIO, err)
				}
				w = f
				if opts.Format == "" && strings.HasSuffix(out, ".parquet") {
					opts.Format = "parquet"
				}
			}
			bw := bufio.NewWriterSize(w, 1<<20)
			rows, err := gen.Write(bw, opts)
			if err == nil {
				err = bw.Flush()
			}
			if f != nil {
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				return fmt.Errorf("gen: %w", err)
			}
			if f != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "hfload: wrote %d %s rows to %s\n", rows, opts.Dataset, out)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Int64Var(&opts.Rows, "rows", 0, "number of rows (default 100000 when --size is not given)")
	f.StringVar(&size, "size", "", "approximate output size, e.g. 1GB (stops at the first row past it)")
	f.Uint64Var(&opts.Seed, "seed", 1, "random seed: the same seed gives the same file")
	f.StringVar(&opts.Format, "format", "", "csv (default) or parquet (default from --out's extension)")
	f.StringVar(&sep, "separator", "", "CSV field separator (default ,)")
	f.BoolVar(&noHeader, "no-header", false, "omit the CSV header row")
	f.StringVar(&opts.Null, "null", "", `CSV NULL marker (default: empty unquoted field)`)
	f.StringVarP(&out, "out", "o", "", "output file (default stdout)")
	f.BoolVar(&list, "list", false, "list the datasets and their columns")
	return cmd
}

func datasetNames() string {
	var names []string
	for _, d := range gen.Datasets() {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}
