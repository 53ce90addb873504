package pipeline

import (
	"fmt"
	"strings"
)

// SourceOptions configures how input files are read (CSV and Parquet).
//
// CSV NULL rules: with Null == "" (the default, PostgreSQL `COPY ... CSV`), an empty unquoted field is
// NULL and a quoted empty field ("") is the empty string. With Null set to a marker such as `\N` (MySQL
// `INTO OUTFILE`, Sqoop) or `NULL`, only that exact unquoted text is NULL and an empty unquoted field is
// the empty string. A quoted marker ("\N") is always text.
type SourceOptions struct {
	Format         string // "csv", "parquet", or "" = from the file extension
	Separator      byte   // field separator; 0 = ',' (or '\t' for .tsv files)
	Quote          byte   // quote character; 0 = '"'
	Header         bool   // the first CSV record holds the column names (see CSVSource.Header)
	Null           string // unquoted NULL marker; "" = an empty unquoted field is NULL
	BatchRows      int    // rows per batch; 0 = 4096
	ExpectedFields int    // fields per CSV row; 0 = the header's (or first row's) count

	// Escape enables backslash-style escapes as written by MySQL `SELECT ... INTO OUTFILE` (whose
	// default is ESCAPED BY '\\'): the escape character makes the next byte literal (separator, line
	// feed, quote, itself), \0 \b \n \r \t \Z are control characters and an unquoted \N is NULL.
	// 0 = no escapes (RFC 4180, PostgreSQL CSV).
	Escape byte

	// TrimSpace removes leading and trailing ASCII spaces from unquoted CSV fields before the NULL
	// check (Oracle SQL*Plus spools pad columns, and a NULL becomes blanks), and allows spaces around
	// quoted fields (`"a" , "b"`); spaces inside the quotes are kept.
	TrimSpace bool
	// MaxRecordBytes bounds one CSV record (a quoted field that never closes is cut at this size and
	// reported as a bad row); 0 = 64 MiB.
	MaxRecordBytes int
}

// HeaderSource is implemented by sources that know their column names: *CSVSource (the header row,
// when SourceOptions.Header is set) and *ParquetSource (the schema's field names).
type HeaderSource interface {
	Source
	Header() []string
}

const (
	sourceDefaultBatchRows = 4096
	sourceDefaultMaxRecord = 64 << 20
)

// FormatCSV and FormatParquet are the values of SourceOptions.Format.
const (
	FormatCSV     = "csv"
	FormatParquet = "parquet"
)

// csvNormalized returns opts with defaults filled in for a CSV file at path, or an error for
// separator/quote choices that cannot work.
func csvNormalized(opts SourceOptions, path string) (SourceOptions, error) {
	if opts.Separator == 0 {
		opts.Separator = ','
		if strings.HasSuffix(inputStripCompression(strings.ToLower(path)), ".tsv") {
			opts.Separator = '\t'
		}
	}
	if opts.Quote == 0 {
		opts.Quote = '"'
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = sourceDefaultBatchRows
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = sourceDefaultMaxRecord
	}
	if opts.MaxRecordBytes > 1<<30 {
		return opts, fmt.Errorf("csv options: MaxRecordBytes %d is over 1 GiB", opts.MaxRecordBytes)
	}
	if opts.ExpectedFields < 0 {
		return opts, fmt.Errorf("csv options: negative ExpectedFields %d", opts.ExpectedFields)
	}
	switch {
	case opts.Separator == '\n' || opts.Separator == '\r':
		return opts, fmt.Errorf("csv options: separator cannot be a line terminator (%q)", opts.Separator)
	case opts.Quote == '\n' || opts.Quote == '\r':
		return opts, fmt.Errorf("csv options: quote cannot be a line terminator (%q)", opts.Quote)
	case opts.Separator == opts.Quote:
		return opts, fmt.Errorf("csv options: separator and quote are both %q", opts.Separator)
	case opts.Escape != 0 && (opts.Escape == opts.Separator || opts.Escape == opts.Quote || opts.Escape == '\n' || opts.Escape == '\r'):
		return opts, fmt.Errorf("csv options: escape %q clashes with the separator, quote or line end", opts.Escape)
	}
	return opts, nil
}
