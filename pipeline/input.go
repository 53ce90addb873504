package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hfload/hfload/internal/storage"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// ExpandInputs turns command-line paths into the ordered input list of a run.
//
//   - "-" is standard input (Size -1; CSV unless opts.Format says otherwise).
//   - A path with glob metacharacters (* ? [) expands to its matches in sorted order; a glob that
//     matches nothing is an error.
//   - A directory expands to the regular files directly inside it whose format is recognised, sorted,
//     skipping names that start with "." or "_" (Spark/Hive markers such as _SUCCESS).
//   - A plain path must exist.
//   - "s3://bucket/key" names an object, "s3://bucket/prefix/*.csv.gz" a glob over keys ("*" and "?"
//     do not cross "/"), and "s3://bucket/prefix/" a "directory", expanded like a local one. Credentials
//     and endpoint come from the AWS SDK's standard chain (see package internal/storage); CSV objects
//     are streamed, Parquet objects read by ranges.
//
// The format comes from the extension (.csv/.tsv/.txt → csv, .parquet/.parq → parquet, optionally
// followed by .gz or .zst for csv) unless opts.Format is set. Files are opened only by Input.Open, so
// a run over thousands of files holds one descriptor per open source.
func ExpandInputs(paths []string, opts SourceOptions) ([]Input, error) {
	return inputExpand(context.Background(), paths, opts, os.Stdin)
}

// ExpandInputsContext is ExpandInputs with a context, which bounds listing and reading remote inputs.
func ExpandInputsContext(ctx context.Context, paths []string, opts SourceOptions) ([]Input, error) {
	return inputExpand(ctx, paths, opts, os.Stdin)
}

// inputExpand is ExpandInputs with standard input as a parameter (for tests).
func inputExpand(ctx context.Context, paths []string, opts SourceOptions, stdin io.Reader) ([]Input, error) {
	if len(paths) == 0 {
		return nil, errors.New("no input paths")
	}
	switch opts.Format {
	case "", FormatCSV, FormatParquet:
	default:
		return nil, fmt.Errorf("unknown input format %q (want csv or parquet)", opts.Format)
	}
	var out []Input
	stores := inputStores{}
	addRemote := func(path string, size int64, remote *inputRemote) error {
		format, err := inputFormat(path, opts.Format)
		if err != nil {
			return err
		}
		if format == FormatParquet && inputStripCompression(path) != path {
			return fmt.Errorf("%s: compressed Parquet files are not supported (Parquet compresses its own pages)", path)
		}
		in := Input{Path: path, Index: len(out), Size: size}
		if format == FormatCSV && path != "-" {
			in.tee = &inputTee{}
			if inputStripCompression(path) == path {
				in.text = &inputText{opts: opts, remote: remote}
			}
		}
		in.Open = inputOpener(in, format, opts, stdin, remote)
		out = append(out, in)
		return nil
	}
	add := func(path string, size int64) error { return addRemote(path, size, nil) }
	for _, p := range paths {
		switch {
		case p == "-":
			if err := add(p, -1); err != nil {
				return nil, err
			}
		case storage.IsRemote(p):
			if err := inputAddRemote(ctx, p, opts.Format, stores, addRemote); err != nil {
				return nil, err
			}
		case strings.ContainsAny(p, "*?["):
			matches, err := filepath.Glob(p)
			if err != nil {
				return nil, fmt.Errorf("input glob %q: %w", p, err)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("input glob %q matches no files", p)
			}
			sort.Strings(matches)
			for _, m := range matches {
				st, err := os.Stat(m)
				if err != nil {
					return nil, fmt.Errorf("input %s: %w", m, err)
				}
				if st.IsDir() {
					continue
				}
				if err := add(m, st.Size()); err != nil {
					return nil, err
				}
			}
		default:
			st, err := os.Stat(p)
			if err != nil {
				return nil, fmt.Errorf("input %s: %w", p, err)
			}
			if !st.IsDir() {
				if err := add(p, st.Size()); err != nil {
					return nil, err
				}
				continue
			}
			n, err := inputAddDir(p, opts.Format, add)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				return nil, fmt.Errorf("input directory %s holds no csv or parquet files", p)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no input files")
	}
	return out, nil
}

func inputAddDir(dir, format string, add func(string, int64) error) (int, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return 0, fmt.Errorf("input directory %s: %w", dir, err)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || !e.Type().IsRegular() {
			continue
		}
		if _, err := inputFormat(name, format); err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return n, fmt.Errorf("input %s: %w", filepath.Join(dir, name), err)
		}
		if err := add(filepath.Join(dir, name), info.Size()); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// inputStripCompression removes a trailing .gz or .zst.
func inputStripCompression(path string) string {
	lower := strings.ToLower(path)
	for _, ext := range []string{".gz", ".zst"} {
		if strings.HasSuffix(lower, ext) {
			return path[:len(path)-len(ext)]
		}
	}
	return path
}

// inputFormat decides the format of path: forced, or from the extension.
func inputFormat(path, forced string) (string, error) {
	if forced != "" {
		return forced, nil
	}
	if path == "-" {
		return FormatCSV, nil
	}
	switch strings.ToLower(filepath.Ext(inputStripCompression(path))) {
	case ".csv", ".tsv", ".txt":
		return FormatCSV, nil
	case ".parquet", ".parq":
		return FormatParquet, nil
	}
	return "", fmt.Errorf("input %s: cannot tell the format from the extension (want .csv, .tsv, .txt, .parquet, optionally .gz/.zst); set the format explicitly", path)
}

// inputOpener returns the lazy Open function of an input.
func inputOpener(in Input, format string, opts SourceOptions, stdin io.Reader, remote *inputRemote) func() (Source, error) {
	return func() (Source, error) {
		if format == FormatParquet {
			if in.Path == "-" {
				return nil, errors.New("parquet cannot be read from standard input (it needs random access)")
			}
			if remote != nil {
				return remote.openParquet(in.Path, in.Index, opts)
			}
			return OpenParquet(in.Path, in.Index, opts)
		}
		var tee io.Writer
		if in.tee != nil {
			tee = in.tee.w // see Input.SetTee
		}
		r, err := inputOpenText(in.Path, stdin, tee, remote)
		if err != nil {
			return nil, err
		}
		src, err := NewCSVSource(r, in.Path, in.Index, opts)
		if err != nil {
			r.Close()
			return nil, err
		}
		return src, nil
	}
}

// inputOpenText opens a text input, decompressing .gz and .zst transparently; with tee set, the
// file's bytes are written to tee as they are read.
func inputOpenText(path string, stdin io.Reader, tee io.Writer, remote *inputRemote) (io.ReadCloser, error) {
	var f io.ReadCloser
	if path == "-" {
		f = io.NopCloser(stdin)
	} else {
		var file io.ReadCloser
		var err error
		if remote != nil {
			file, err = remote.reader() // its errors name the object
		} else if file, err = os.Open(path); err != nil {
			err = fmt.Errorf("open input: %w", err)
		}
		if err != nil {
			return nil, err
		}
		f = file
		if tee != nil {
			f = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(file, tee), file}
		}
	}
	lower := strings.ToLower(path)
	if path == "-" {
		// Standard input has no name: recognise compressed streams by their magic numbers.
		br := bufio.NewReaderSize(f, 64<<10)
		magic, _ := br.Peek(4)
		f = struct {
			io.Reader
			io.Closer
		}{br, f}
		switch {
		case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
			lower = "-.gz"
		case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
			lower = "-.zst"
		}
	}
	switch {
	case strings.HasSuffix(lower, ".gz"):
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // not even a gzip header
			}
			return nil, corruptInput(path, fmt.Errorf("gzip: %w", err))
		}
		return &inputStack{Reader: corruptReader{zr, path}, closers: []io.Closer{zr, f}}, nil
	case strings.HasSuffix(lower, ".zst"):
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, corruptInput(path, fmt.Errorf("zstd: %w", err))
		}
		return &inputStack{Reader: corruptReader{zr, path}, closers: []io.Closer{inputCloseFunc(func() error { zr.Close(); return nil }), f}}, nil
	}
	return f, nil
}

// inputStack is a decompressing reader that closes the decoder and then the file.
type inputStack struct {
	io.Reader
	closers []io.Closer
}

func (s *inputStack) Close() error {
	var errs []error
	for _, c := range s.closers {
		if err := c.Close(); err != nil && !errors.Is(err, fs.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

type inputCloseFunc func() error

func (f inputCloseFunc) Close() error { return f() }
