package main

import (
	"bufio"
	"os"
	"testing"

	"github.com/hfload/hfload/internal/gen"
)

// writeOrdersTo writes an orders export of about size bytes, with a header, to path and returns its rows.
func writeOrdersTo(t *testing.T, path string, size int64, seed uint64) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	rows, err := gen.Write(bw, gen.Options{Dataset: "orders", TargetBytes: size, Seed: seed, Header: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return rows
}
