package pipeline

import (
	"fmt"
)

// SourceOptions configures how input files are read (CSV and Parquet).
//
// Text inputs are read in a Dialect (see dialect.go and README "Dialects"), which sets the separator,
// quoting, escaping and NULL rule together; the single options below override parts of it.
//
// The NULL rule of text inputs: a field is NULL when it is unquoted and its text, before escapes are
// decoded, equals Null; with no Null (the csv and postgres-csv dialects' default) an empty unquoted
// field is NULL. A quoted field is never NULL ("" is the empty string). The postgres-text, mysql and
// mysql-csv dialects default Null to `\N`, so their empty fields are empty strings.
type SourceOptions struct {
	Format    string // "csv", "parquet", or "" = from the file extension
	Dialect   string // text dialect: csv (default), postgres-text, postgres-csv, mysql, mysql-csv
	Separator byte   // field separator; 0 = the dialect's (csv: ',', or '\t' for .tsv files)
	Quote     byte   // quote character; 0 = the dialect's ('"' or none)
	NoQuote   bool   // no quoting at all (--quote none): a quote byte is ordinary text
	Header    bool   // the first CSV record holds the column names (see CSVSource.Header)
	Null      string // unquoted NULL marker; "" = the dialect's (csv: an empty unquoted field is NULL)
	BatchRows int    // rows per batch; 0 = 4096
	// ExpectedFields is the number of fields per CSV row (from the column spec); 0 = the header's, or
	// without a header the most common count among the first records. Never the first row's alone:
	// one malformed first line must not reject every good line.
	ExpectedFields int
	// PadShort accepts rows with fewer than ExpectedFields fields, the missing ones NULL (ImportTsv:
	// missing trailing columns produce no cells).
	PadShort bool

	// Escape is the escape character (the databases' ESCAPED BY / ESCAPE); 0 = the dialect's. Its
	// rules are the dialect's: MySQL's (\0 \b \n \r \t \Z, anything else literal; also in the csv
	// dialect), PostgreSQL TEXT's (plus \f \v, octal and \xHH) or PostgreSQL CSV's (inside quotes,
	// before the quote or itself).
	Escape   byte
	NoEscape bool // no escapes at all (--escape none)

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
	if err := csvDialect(&opts, path); err != nil {
		return opts, err
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
	case opts.Quote != 0 && opts.Separator == opts.Quote:
		return opts, fmt.Errorf("csv options: separator and quote are both %q", opts.Separator)
	case opts.Escape != 0 && (opts.Escape == opts.Separator || opts.Escape == opts.Quote || opts.Escape == '\n' || opts.Escape == '\r'):
		return opts, fmt.Errorf("csv options: escape %q clashes with the separator, quote or line end", opts.Escape)
	}
	return opts, nil
}
