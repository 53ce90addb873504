package jobs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/testdb"
)

// nastyRow is one row of the table every database exports: a row key and two values (nil = NULL).
type nastyRow struct {
	k    string
	v, w *string
}

func strp(s string) *string { return &s }

// nastyRows are values that break naive readers: separators, line ends, escapes, quotes, the texts
// \N and NULL, empty vs NULL, UTF-8, control bytes, and with nul NUL bytes (MySQL; PostgreSQL text
// cannot hold them). Keys are nasty too.
func nastyRows(nul bool) []nastyRow {
	vals := []*string{strp("a\tb"), strp("l1\nl2"), strp("cr\r"), strp("a\r\nb"), strp(`back\slash`), strp(`x\`),
		strp(`"q"`), strp(`"`), strp(`\N`), strp("NULL"), strp(""), nil, strp("ünï €"), strp(","), strp("\b\f\v\x01\x1a"),
		strp("\t"), strp("\n"), strp(`\101`), strp(`\x41`), strp(" sp "), strp(`\.`), strp("'"), strp(`\\N`), strp("plain")}
	keys := []string{"k\tey\n", `k\N`, `"qk"`, "ünï", "k,comma", `k\`, "k\rr", "NULL", `\N`}
	if nul {
		vals = append(vals, strp("a\x00b"), strp("\x00"), strp(`\0`))
		keys = append(keys, "k\x00nul")
	}
	var rows []nastyRow
	for i, v := range vals {
		k := fmt.Sprintf("row%02d", i)
		if i < len(keys) {
			k = keys[i]
		}
		rows = append(rows, nastyRow{k: k, v: v, w: vals[(i+7)%len(vals)]})
	}
	rows = append(rows, nastyRow{k: "allnull"}, nastyRow{k: "allempty", v: strp(""), w: strp("")})
	return rows
}

// nastyCells is what the rows must load as (column spec HBASE_ROW_KEY,d:v,d:w: a NULL is no cell, an
// empty string an empty cell), in HBase order; nullText, when set, is a text the export cannot tell
// from NULL (mysql --batch writes both as NULL), expected as NULL.
func nastyCells(rows []nastyRow, nullText string) []string {
	sorted := append([]nastyRow(nil), rows...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].k < sorted[j].k })
	var out []string
	for _, r := range sorted {
		if nullText != "" && r.k == nullText {
			continue
		}
		for _, c := range []struct {
			q string
			v *string
		}{{"v", r.v}, {"w", r.w}} {
			if c.v == nil || nullText != "" && *c.v == nullText {
				continue
			}
			out = append(out, cellLine(r.k, "d", c.q, *c.v))
		}
	}
	return out
}

// loadExport loads one exported file with the given dialect flags and checks every cell.
func loadExport(t *testing.T, file string, rows []nastyRow, nullText string, set func(*Job)) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	job := &Job{Name: "dialects", Input: []string{file}, Columns: "HBASE_ROW_KEY,d:v,d:w", Table: "t", Out: out,
		Timestamp: testTS, Memory: Size(64 << 20), MaxRejects: -1}
	set(job)
	if err := job.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyStream})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	rejects := 0 // a key the export cannot tell from NULL is a NULL key: the row is rejected
	for _, r := range rows {
		if nullText != "" && r.k == nullText {
			rejects++
		}
	}
	if m.Counts.RowsRead != int64(len(rows)) || m.Counts.RowsRejected != int64(rejects) {
		raw, _ := os.ReadFile(file)
		t.Fatalf("counts %+v, want %d rows read, %d rejected; file:\n%q", m.Counts, len(rows), rejects, raw)
	}
	got := readOutput(t, out, m)
	want := nastyCells(rows, nullText)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		raw, _ := os.ReadFile(file)
		t.Fatalf("cells differ from the table\n got %q\nwant %q\nfile %q", got, want, raw)
	}
}

// pgLiteral is s as a PostgreSQL E” literal with every byte outside [A-Za-z0-9 ] as \xHH.
func pgLiteral(s *string) string {
	if s == nil {
		return "NULL"
	}
	var b strings.Builder
	b.WriteString("E'")
	for i := 0; i < len(*s); i++ {
		c := (*s)[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// myLiteral is s as a MySQL hex literal (any bytes, NUL included).
func myLiteral(s *string) string {
	if s == nil {
		return "NULL"
	}
	if *s == "" {
		return "''"
	}
	return fmt.Sprintf("X'%x'", *s)
}

func TestDialectsPostgresExports(t *testing.T) {
	pg := servers.Postgres(t)
	ctx := context.Background()
	rows := nastyRows(false)
	var ins []string
	for _, r := range rows {
		ins = append(ins, fmt.Sprintf("(%s, %s, %s)", pgLiteral(&r.k), pgLiteral(r.v), pgLiteral(r.w)))
	}
	if _, err := pg.Psql(ctx, "DROP TABLE IF EXISTS nasty; CREATE TABLE nasty (k text PRIMARY KEY, v text, w text)",
		"INSERT INTO nasty VALUES "+strings.Join(ins, ", ")); err != nil {
		t.Fatal(err)
	}
	client := t.TempDir()
	cases := []struct {
		name, command, file string
		set                 func(*Job)
	}{
		{"COPY text", `COPY nasty TO '` + pg.OutDir + `/copy.txt'`, pg.OutDir + "/copy.txt",
			func(j *Job) { j.Dialect = "postgres-text" }},
		{`\copy text`, `\copy nasty TO '` + client + `/copy.tsv'`, client + "/copy.tsv",
			func(j *Job) { j.Dialect = "postgres-text" }},
		{`\copy csv`, `\copy nasty TO '` + client + `/copy.csv' (FORMAT csv)`, client + "/copy.csv",
			func(j *Job) { j.Dialect = "postgres-csv" }},
		{"COPY csv header", `COPY nasty TO '` + pg.OutDir + `/header.csv' (FORMAT csv, HEADER)`, pg.OutDir + "/header.csv",
			func(j *Job) { j.Dialect, j.Header = "postgres-csv", true }},
		{"COPY csv NULL ESCAPE", `COPY nasty TO '` + pg.OutDir + `/null.txt' (FORMAT csv, NULL 'NULL', ESCAPE '\')`, pg.OutDir + "/null.txt",
			func(j *Job) { j.Dialect, j.Null, j.Escape = "postgres-csv", "NULL", `\` }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := pg.Psql(ctx, c.command); err != nil {
				t.Fatal(err)
			}
			loadExport(t, c.file, rows, "", c.set)
		})
	}
}

func TestDialectsMariaDBExports(t *testing.T) {
	my := servers.MariaDB(t)
	ctx := context.Background()
	rows := nastyRows(true)
	var ins []string
	for _, r := range rows {
		ins = append(ins, fmt.Sprintf("(%s, %s, %s)", myLiteral(&r.k), myLiteral(r.v), myLiteral(r.w)))
	}
	if _, err := my.SQL(ctx, "test", "DROP TABLE IF EXISTS nasty; CREATE TABLE nasty (k VARBINARY(64) PRIMARY KEY, v BLOB, w BLOB); "+
		"INSERT INTO nasty VALUES "+strings.Join(ins, ", ")); err != nil {
		t.Fatal(err)
	}
	client := t.TempDir()
	csvOpts := []string{"--fields-terminated-by=,", `--fields-optionally-enclosed-by="`}
	cases := []struct {
		name     string
		export   func() ([]byte, error)
		file     string
		nullText string
		set      func(*Job)
	}{
		{"INTO OUTFILE", func() ([]byte, error) {
			return my.SQL(ctx, "test", "SELECT * FROM nasty INTO OUTFILE '"+my.OutDir+"/outfile.txt'")
		}, my.OutDir + "/outfile.txt", "", func(j *Job) { j.Dialect = "mysql" }},
		{"INTO OUTFILE csv", func() ([]byte, error) {
			return my.SQL(ctx, "test", "SELECT * FROM nasty INTO OUTFILE '"+my.OutDir+`/outfile.csv' FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"'`)
		}, my.OutDir + "/outfile.csv", "", func(j *Job) { j.Dialect = "mysql-csv" }},
		{"mysqldump --tab", func() ([]byte, error) {
			return dumpTab(ctx, my, "tab")
		}, my.OutDir + "/tab/nasty.txt", "", func(j *Job) { j.Dialect = "mysql" }},
		{"mysqldump --tab csv", func() ([]byte, error) {
			return dumpTab(ctx, my, "tabcsv", csvOpts...)
		}, my.OutDir + "/tabcsv/nasty.txt", "", func(j *Job) { j.Dialect = "mysql-csv" }},
		{"mysql --batch", func() ([]byte, error) {
			out, err := my.Client(ctx, "--batch", "-e", "SELECT * FROM nasty", "test")
			if err == nil {
				err = os.WriteFile(client+"/batch.tsv", out, 0o644)
			}
			return out, err
		}, client + "/batch.tsv", "NULL", func(j *Job) { j.Dialect, j.Header, j.Null = "mysql", true, "NULL" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if out, err := c.export(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			loadExport(t, c.file, rows, c.nullText, c.set)
		})
	}
}

// dumpTab runs mysqldump --tab into a fresh subdirectory of the server's OutDir (the server writes
// the .txt, the client the .sql).
func dumpTab(ctx context.Context, my *testdb.MariaDB, sub string, opts ...string) ([]byte, error) {
	dir, err := my.TabDir(sub)
	if err != nil {
		return nil, err
	}
	out, err := my.Dump(ctx, append(append([]string{"--tab=" + dir}, opts...), "test", "nasty")...)
	return bytes.TrimSpace(out), err
}
