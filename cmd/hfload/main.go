package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hfload/hfload/internal/version"
	"github.com/hfload/hfload/jobs"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "hfload:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "hfload:", err)
	return jobs.ExitCode(err)
}

// exitError carries a specific exit status (e.g. verify's 1) through cobra.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "hfload",
		Short: "Turn CSV and Parquet exports into HBase HFiles ready for completebulkload",
		Long: `hfload turns relational exports (CSV, Parquet) into Apache HBase HFiles ready for
'hbase completebulkload': one static binary, no Hadoop cluster, no JVM, no client Puts.

Exit codes: 0 ok (also "nothing to do"), 1 usage or configuration error, 2 bad rows over --max-rejects,
3 I/O error, 4 another run holds the job's lock, 5 a loaded input changed (use --reload), 130 interrupted.`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	var cpuProfile, traceFile, memProfile string
	var profFile, trFile *os.File
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile to this file (for performance work)")
	root.PersistentFlags().StringVar(&traceFile, "trace", "", "write a Go execution trace to this file (for performance work)")
	root.PersistentFlags().StringVar(&memProfile, "memprofile", "", "write a Go allocation profile to this file at exit (for performance work)")
	root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentFlags().MarkHidden("memprofile")
	root.PersistentFlags().MarkHidden("trace")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if traceFile != "" {
			f, err := os.Create(traceFile)
			if err != nil {
				return err
			}
			trFile = f
			if err := trace.Start(f); err != nil {
				return err
			}
		}
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		profFile = f
		return pprof.StartCPUProfile(f)
	}
	root.PersistentPostRun = func(cmd *cobra.Command, args []string) {
		if profFile != nil {
			pprof.StopCPUProfile()
			profFile.Close()
		}
		if trFile != nil {
			trace.Stop()
			trFile.Close()
		}
		if memProfile != "" {
			if f, err := os.Create(memProfile); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}
	}
	root.AddCommand(newRunCmd(), newGenCmd())
	for _, c := range extraCommands() {
		root.AddCommand(c)
	}
	return root
}
