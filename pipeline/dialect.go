package pipeline

import (
	"fmt"
	"strings"
)

// Dialect names (SourceOptions.Dialect, `--dialect`): which database export format a text input is in.
// The dialect sets the separator, quoting, escaping and NULL rule together; SourceOptions' Separator,
// Quote/NoQuote, Escape/NoEscape and Null override single parts of it, as the databases' own export
// options do. The dialect decides the parser whatever the file's extension.
const (
	// DialectCSV is RFC 4180 (the default): ',' (tab for .tsv files), '"' quotes with "" inside, no
	// escapes; an empty unquoted field is NULL unless Null names a marker.
	DialectCSV = "csv"
	// DialectPostgresText is PostgreSQL's TEXT format (COPY … TO, \copy, pg_dump data): tab, no
	// quoting, `\N` is NULL, backslash escapes \b \f \n \r \t \v \\, \ooo (octal), \xHH, and a
	// backslash before any other byte stands for that byte.
	DialectPostgresText = "postgres-text"
	// DialectPostgresCSV is COPY … (FORMAT csv): RFC 4180 with ','; an unquoted empty field is NULL
	// and "" is the empty string. Escape (COPY's ESCAPE) applies inside quoted fields only, before
	// the quote or itself.
	DialectPostgresCSV = "postgres-csv"
	// DialectMySQL is SELECT … INTO OUTFILE, mysqldump --tab and mysql --batch with their defaults:
	// tab, no quoting, `\N` is NULL, \0 \b \n \r \t \Z, and a backslash before any other byte (the
	// separator, a line feed, itself) stands for that byte. Lines end at LF only: MySQL does not
	// escape a carriage return.
	DialectMySQL = "mysql"
	// DialectMySQLCSV is INTO OUTFILE … FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"': as
	// DialectMySQL with ',' and '"' quotes; a quote inside a quoted field is `\"`.
	DialectMySQLCSV = "mysql-csv"
)

// Dialects returns the dialect names, the default first.
func Dialects() []string {
	return []string{DialectCSV, DialectPostgresText, DialectPostgresCSV, DialectMySQL, DialectMySQLCSV}
}

// escRules says how the escape character (SourceOptions.Escape) works.
type escRules uint8

const (
	escNone     escRules = iota
	escMySQL             // \0 \b \n \r \t \Z; before any other byte: that byte; quoted and unquoted fields
	escPostgres          // \b \f \n \r \t \v, \ooo, \xHH; before any other byte: that byte
	escQuoted            // PostgreSQL CSV ESCAPE: inside quoted fields, before the quote or itself only
)

// dialectDefaults are a dialect's settings before the single knobs override them.
type dialectDefaults struct {
	sep, quote, esc byte // 0 quote/esc = none
	null            string
	crlf            bool // a CR before the LF belongs to the line end
}

func dialectDefaultsOf(name string) (dialectDefaults, bool) {
	switch name {
	case DialectCSV:
		return dialectDefaults{sep: ',', quote: '"', crlf: true}, true
	case DialectPostgresText:
		return dialectDefaults{sep: '\t', esc: '\\', null: `\N`, crlf: true}, true
	case DialectPostgresCSV:
		return dialectDefaults{sep: ',', quote: '"', crlf: true}, true
	case DialectMySQL:
		return dialectDefaults{sep: '\t', esc: '\\', null: `\N`}, true
	case DialectMySQLCSV:
		return dialectDefaults{sep: ',', quote: '"', esc: '\\', null: `\N`}, true
	}
	return dialectDefaults{}, false
}

// ParseDialect checks a dialect name ("" = csv) and returns it in canonical form.
func ParseDialect(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return DialectCSV, nil
	}
	if _, ok := dialectDefaultsOf(n); !ok {
		return "", fmt.Errorf("dialect %q is not one of %s", name, strings.Join(Dialects(), ", "))
	}
	return n, nil
}

// csvDialect applies the dialect of opts: it fills Separator, Quote, Escape and Null from the dialect
// where opts leaves them unset (NoQuote/NoEscape force none). Separator falls back to tab for .tsv
// files in the csv dialect only.
func csvDialect(opts *SourceOptions, path string) error {
	name, err := ParseDialect(opts.Dialect)
	if err != nil {
		return fmt.Errorf("csv options: %w", err)
	}
	opts.Dialect = name
	d, _ := dialectDefaultsOf(name)
	if opts.Separator == 0 {
		opts.Separator = d.sep
		if name == DialectCSV && strings.HasSuffix(inputStripCompression(strings.ToLower(path)), ".tsv") {
			opts.Separator = '\t'
		}
	}
	switch {
	case opts.NoQuote:
		opts.Quote = 0
	case opts.Quote == 0:
		opts.Quote = d.quote
	}
	explicitEsc := opts.Escape != 0
	switch {
	case opts.NoEscape:
		opts.Escape = 0
	case opts.Escape == 0:
		opts.Escape = d.esc
	}
	if name == DialectPostgresCSV && opts.Escape == opts.Quote {
		opts.Escape = 0 // COPY's default ESCAPE is the quote: "" doubling
	}
	if opts.Null == "" && d.null != "" {
		switch {
		case name == DialectPostgresText:
			opts.Null = d.null
		case opts.Escape == 0:
			opts.Null = "NULL" // MySQL writes NULL as the word when ESCAPED BY ''
		case explicitEsc:
			opts.Null = string(opts.Escape) + "N"
		default:
			opts.Null = d.null
		}
	}
	return nil
}

// csvRules returns the escape rules and whether CRLF ends a line for normalized options.
func csvRules(opts SourceOptions) (escRules, bool) {
	d, _ := dialectDefaultsOf(opts.Dialect)
	if opts.Escape == 0 {
		return escNone, d.crlf
	}
	switch opts.Dialect {
	case DialectPostgresText:
		return escPostgres, d.crlf
	case DialectPostgresCSV:
		return escQuoted, d.crlf
	}
	return escMySQL, d.crlf // csv with an escape: MySQL's rules, as before dialects existed
}
