package gen

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
)

// Options says what to generate. Rows and TargetBytes both bound the output (whichever is reached
// first stops it); at least one must be set.
type Options struct {
	Dataset      string // orders|logs|metrics
	Rows         int64  // number of data rows; 0 = no row limit
	TargetBytes  int64  // stop after the row (CSV) or row group (Parquet) that reaches this size; 0 = no limit
	Seed         uint64 // the same seed gives the same output
	Format       string // csv (default) | parquet
	Separator    byte   // CSV field separator; 0 = ','
	Header       bool   // CSV: write a header row with the column names
	Null         string // CSV NULL marker; "" = empty unquoted field
	RowGroupRows int    // Parquet rows per row group; 0 = 65536
}

// Dataset describes one dataset.
type Dataset struct {
	Name        string
	Description string
	Columns     []Column
}

// Column describes one column of a dataset.
type Column struct {
	Name     string
	Type     string // int64|int32|decimal(12,2)|string|datetime|double
	Nullable bool
	Note     string
}

// Datasets lists the datasets Write can generate, in a fixed order.
func Datasets() []Dataset {
	var out []Dataset
	for _, name := range genDatasetNames {
		t := genNewTable(name, rand.New(rand.NewPCG(0, 0)))
		d := Dataset{Name: name, Description: t.description()}
		for _, c := range t.columns() {
			d.Columns = append(d.Columns, Column{Name: c.name, Type: c.kind.String(), Nullable: c.nullable, Note: c.note})
		}
		out = append(out, d)
	}
	return out
}

// Write generates the dataset described by opts into w and returns the number of data rows written.
func Write(w io.Writer, opts Options) (int64, error) {
	if opts.Rows < 0 || opts.TargetBytes < 0 || opts.RowGroupRows < 0 {
		return 0, errors.New("gen: negative Rows, TargetBytes or RowGroupRows")
	}
	if opts.Rows == 0 && opts.TargetBytes == 0 {
		return 0, errors.New("gen: set Rows or TargetBytes")
	}
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	t := genNewTable(opts.Dataset, rng)
	if t == nil {
		return 0, fmt.Errorf("gen: unknown dataset %q (have %v)", opts.Dataset, genDatasetNames)
	}
	switch opts.Format {
	case "", "csv":
		if opts.Separator == 0 {
			opts.Separator = ','
		}
		if opts.Separator == '"' || opts.Separator == '\n' || opts.Separator == '\r' {
			return 0, fmt.Errorf("gen: separator %q cannot be used", opts.Separator)
		}
		return genWriteCSV(w, t, opts)
	case "parquet":
		if opts.RowGroupRows == 0 {
			opts.RowGroupRows = 65536
		}
		return genWriteParquet(w, t, opts)
	}
	return 0, fmt.Errorf("gen: unknown format %q (want csv or parquet)", opts.Format)
}

// genCountingWriter counts the bytes that pass through it.
type genCountingWriter struct {
	w io.Writer
	n int64
}

func (c *genCountingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
