// Command hfload turns relational exports (CSV, Parquet) into HBase HFiles ready for completebulkload.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "hfload",
		Short:         "Turn CSV and Parquet exports into HBase HFiles ready for completebulkload",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "hfload:", err)
		os.Exit(1)
	}
}
