package main

import "github.com/spf13/cobra"

// extraCommands lists the command groups defined in their own files.
func extraCommands() []*cobra.Command {
	return []*cobra.Command{newHFileCmd(), newValidateCmd(), newPlanCmd(), newRunsCmd(), newStatusCmd(), newAnalyzeCmd()}
}
