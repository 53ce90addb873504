package testdb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// PostgresHint says how to get the PostgreSQL binaries.
const PostgresHint = "apt-get install -y postgresql (Debian/Ubuntu; the binaries are looked for in /usr/lib/postgresql/*/bin)"

// Postgres is a private PostgreSQL server: superuser "postgres" (trust authentication) on
// 127.0.0.1:Port, data in its own temporary directory.
type Postgres struct {
	Port int
	// OutDir is a directory the server can write (COPY … TO 'file') and the tests can read.
	OutDir string

	bin string
	as  runAs
	process
}

// postgresBinDir finds initdb and postgres: $HFLOAD_PG_BIN, Debian's versioned directories, PATH.
func postgresBinDir() string {
	var dirs []string
	if d := os.Getenv("HFLOAD_PG_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(found) - 1; i >= 0; i-- { // newest version first
		dirs = append(dirs, found[i])
	}
	for _, d := range dirs {
		if findBin(filepath.Join(d, "initdb")) != "" && findBin(filepath.Join(d, "postgres")) != "" {
			return d
		}
	}
	if p := findBin("initdb"); p != "" && findBin("postgres") != "" {
		return filepath.Dir(p)
	}
	return ""
}

// StartPostgres initializes a data directory and starts a server on a free loopback port. ctx bounds
// the start only; Stop ends the server.
func StartPostgres(ctx context.Context) (*Postgres, error) {
	bin := postgresBinDir()
	if bin == "" || findBin("psql") == "" {
		return nil, &ErrNotInstalled{What: "PostgreSQL (initdb, postgres, psql)", Hint: PostgresHint}
	}
	as, err := serverUser("postgres")
	if err != nil {
		return nil, err
	}
	root, err := tempRoot("hfload-pg-")
	if err != nil {
		return nil, err
	}
	p := &Postgres{bin: bin, as: as, OutDir: filepath.Join(root, "out"), process: process{name: "postgres", root: root}}
	fail := func(err error) (*Postgres, error) {
		p.Stop()
		return nil, err
	}
	data := filepath.Join(root, "data")
	for _, d := range []string{data, p.OutDir} {
		if err := as.mkdir(d); err != nil {
			return fail(err)
		}
	}
	initdb := as.command(ctx, root, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w\n%s", err, out))
	}
	if _, err := onFreePort(ctx, func(port int) error { return p.start(ctx, data, port) }); err != nil {
		return fail(err)
	}
	return p, nil
}

func (p *Postgres) start(ctx context.Context, data string, port int) error {
	p.Port = port
	cmd := p.as.command(context.Background(), p.root, filepath.Join(p.bin, "postgres"), "-D", data,
		"-c", "listen_addresses=127.0.0.1", "-c", "port="+strconv.Itoa(p.Port),
		"-c", "unix_socket_directories="+data, "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "synchronous_commit=off", "-c", "shared_buffers=16MB", "-c", "max_connections=20")
	ready := func(ctx context.Context) error { _, err := p.Psql(ctx, "SELECT 1"); return err }
	return p.process.start(ctx, cmd, ready, nil)
}

// PsqlArgs are the psql arguments that reach the server as superuser, without any psqlrc.
func (p *Postgres) PsqlArgs() []string {
	return []string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(p.Port), "-U", "postgres", "-d", "postgres"}
}

// Psql runs psql with the given commands (-c each, so backslash commands such as \copy work) and
// returns its standard output; stderr is in the error.
func (p *Postgres) Psql(ctx context.Context, commands ...string) ([]byte, error) {
	args := p.PsqlArgs()
	for _, c := range commands {
		args = append(args, "-c", c)
	}
	return run(ctx, "", "psql", args...)
}

// Stop stops the server (fast shutdown) and removes its directory.
func (p *Postgres) Stop() { p.stop(syscall.SIGINT) }
