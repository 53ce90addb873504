package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/kv"
	"github.com/spf13/cobra"
)

// newHFileCmd builds `hfload hfile`: write, dump, inspect and verify single HFiles.
func newHFileCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hfile",
		Short: "Write, dump, inspect and verify single HFiles",
	}
	cmd.AddCommand(newHFileWriteCmd(), newHFileDumpCmd(), newHFileInspectCmd(), newHFileVerifyCmd())
	return cmd
}

func newHFileWriteCmd() *cobra.Command {
	var (
		version     int
		compression string
		encoding    string
		bloom       string
		blockSize   int
		createTime  int64
		noTags      bool
		labelsPath  string
		level       int
	)
	cmd := &cobra.Command{
		Use:   "write [flags] CELLS OUT",
		Short: "Write cell text lines (row<TAB>family:qualifier<TAB>ts<TAB>type<TAB>value[<TAB>tags]; - = stdin) as one HFile",
		Long: `Write cell text lines as one HFile. Each line is
  row<TAB>family:qualifier<TAB>timestamp<TAB>type<TAB>value[<TAB>tags]
with bytes in HBase's Bytes.toStringBinary notation. The optional tags column (HFile v3 only) is a
comma-separated list, serialized in the order given:
  ttl=MS               TTL tag in milliseconds (as ImportTsv's HBASE_CELL_TTL)
  visibility=EXPR      cell visibility expression, e.g. secret|topsecret (needs --labels)
  vis=1&!2, visfmt=1   raw visibility tags by label ordinal (what dump prints)
  tagT=0xHEX           any tag of type T
--labels names a file of label=ordinal lines, the contents of hbase:labels.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := hfilewriter.DefaultWriterOptions()
			opts.FormatVersion = version
			opts.NoTags = noTags
			opts.BlockSize = blockSize
			opts.CompressionLevel = level
			var err error
			if opts.Compression, err = hfilewriter.ParseCompression(compression); err != nil {
				return err
			}
			if opts.Encoding, err = hfilewriter.ParseEncoding(encoding); err != nil {
				return err
			}
			if opts.Bloom, err = hfilewriter.ParseBloom(bloom); err != nil {
				return err
			}
			opts.CreateTime = createTime
			if createTime < 0 {
				opts.CreateTime = time.Now().UnixMilli()
			}
			labels, err := readLabelsFile(labelsPath)
			if err != nil {
				return err
			}
			// The whole list in memory at once (a file in one read of its size).
			var data []byte
			if args[0] == "-" {
				data, err = io.ReadAll(cmd.InOrStdin())
			} else {
				data, err = os.ReadFile(args[0])
			}
			if err != nil {
				return err
			}
			st, err := writeCellText(args[0], args[1], data, labels, opts, version != 3 || noTags)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d cells, %d bytes\n", args[1], st.Entries, st.BytesWritten)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&version, "format-version", 3, "HFile major version: 3 (v3.3, HBase 2.x) or 2 (v2.3, no tags)")
	f.StringVar(&compression, "compression", "none", "block compression: none|gz|snappy|lz4|zstd")
	f.IntVar(&level, "compression-level", 0, "gz 1-9 or zstd 1-22; 0 = HBase's default (gz: zlib level 6, zstd: 3)")
	f.StringVar(&encoding, "encoding", "none", "data block encoding: none|prefix|diff|fast_diff")
	f.StringVar(&bloom, "bloom", "row", "general bloom filter: none|row|rowcol")
	f.IntVar(&blockSize, "block-size", hfilewriter.DefaultBlockSize, "target uncompressed data block size in bytes")
	f.Int64Var(&createTime, "create-time", -1, "hfile.CREATE_TIME_TS in milliseconds (default: now)")
	f.BoolVar(&noTags, "no-tags", false, "v3 without per-cell tags length (StoreFileWriter with includesTags=false)")
	f.StringVar(&labelsPath, "labels", "", "visibility label map for visibility=EXPR tags: label=ordinal lines (hbase:labels)")
	return cmd
}

// readLabelsFile reads a visibility label map (label=ordinal lines); "" = none.
func readLabelsFile(path string) (map[string]int, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	labels, err := kv.ReadVisibilityLabels(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return labels, nil
}

// openHFile opens path and returns a close function.
func openHFile(path string) (*hfilewriter.Reader, func(), error) {
	r, c, err := hfilewriter.OpenFile(path)
	if err != nil {
		return nil, nil, err
	}
	return r, func() { c.Close() }, nil
}

func newHFileDumpCmd() *cobra.Command {
	var labelsPath string
	cmd := &cobra.Command{
		Use:   "dump [--labels FILE] FILE...",
		Short: "Print every cell in the cell text format that `hfile write` reads (tags as a sixth column); several files one after another",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			labels, err := readLabelsFile(labelsPath)
			if err != nil {
				return err
			}
			for _, path := range args {
				if err := dumpHFile(cmd.OutOrStdout(), path, labels); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&labelsPath, "labels", "", "print visibility tags as expressions over these label names (label=ordinal lines)")
	return cmd
}

// dumpHFile writes the cells of the HFile at path to w.
func dumpHFile(w io.Writer, path string, labels map[string]int) error {
	r, done, err := openHFile(path)
	if err != nil {
		return err
	}
	defer done()
	if _, err := r.DumpCellTextLabels(w, labels); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func newHFileInspectCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Show trailer, file info, index shape, block counts and bloom metadata",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, done, err := openHFile(args[0])
			if err != nil {
				return err
			}
			defer done()
			info, err := r.Inspect()
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), info.String())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newHFileVerifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "verify FILE...",
		Short: "Check checksums, key order, indexes, blooms and counts; exit status 1 on the first problem",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, path := range args {
				r, done, err := openHFile(path)
				if err != nil {
					return err
				}
				err = r.Verify()
				n := r.EntryCount()
				done()
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: OK (%d cells)\n", path, n)
			}
			return nil
		},
	}
}
