package jobs

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hfload/hfload/internal/gen"
	"github.com/hfload/hfload/pipeline"
)

// BenchmarkWatermarkCSV reads a 16 MB orders CSV with and without watermark
// filtering on order_ts (type time; the mark at the middle of the file, so
// half the rows are dropped and every kept batch is rebuilt).
func BenchmarkWatermarkCSV(b *testing.B) {
	path := filepath.Join(b.TempDir(), "orders.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if _, err := gen.Write(w, gen.Options{Dataset: "orders", TargetBytes: 16 << 20, Seed: 1, Header: true}); err != nil {
		b.Fatal(err)
	}
	w.Flush()
	f.Close()
	fi, _ := os.Stat(path)
	ins, err := pipeline.ExpandInputs([]string{path}, pipeline.SourceOptions{Header: true})
	if err != nil {
		b.Fatal(err)
	}
	read := func(ins []pipeline.Input) int64 {
		src, err := ins[0].Open()
		if err != nil {
			b.Fatal(err)
		}
		var rows int64
		for {
			bt, err := src.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows += int64(bt.NumRows)
		}
		src.Close()
		return rows
	}
	total := read(ins)
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for i := 0; i < b.N; i++ {
			read(ins)
		}
	})
	b.Run("watermark-time", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for i := 0; i < b.N; i++ {
			wf, err := newWatermarkFilter("order_ts", "time", -1, &Watermark{Column: "order_ts", Type: "time", Value: "2024-01-02T00:00:00Z"})
			if err != nil {
				b.Fatal(err)
			}
			kept := read(wf.wrap(ins))
			if kept == 0 || wf.Filtered() == 0 || kept+wf.Filtered() != total {
				b.Fatalf("kept %d + filtered %d != %d rows", kept, wf.Filtered(), total)
			}
		}
	})
}
