package testdb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

// MariaDBHint says how to get the MariaDB binaries.
const MariaDBHint = "apt-get install -y mariadb-server mariadb-client (Debian/Ubuntu)"

// MariaDB is a private MariaDB server: user root without a password on a socket of its own and
// 127.0.0.1:Port, data in its own temporary directory, database "test" created.
type MariaDB struct {
	Port   int
	Socket string
	// OutDir is the server's secure_file_priv: INTO OUTFILE and mysqldump --tab write there.
	OutDir string

	as runAs
	process
}

// mariadbBins finds the server, the installer and the client.
func mariadbBins() (server, install, client, dump string) {
	return findBin("mariadbd", "/usr/sbin/mariadbd", "mysqld", "/usr/sbin/mysqld"),
		findBin("mariadb-install-db", "mysql_install_db"),
		findBin("mariadb", "mysql"),
		findBin("mariadb-dump", "mysqldump")
}

// StartMariaDB initializes a data directory and starts a server (see Postgres for ctx).
func StartMariaDB(ctx context.Context) (*MariaDB, error) {
	server, install, client, dump := mariadbBins()
	if server == "" || install == "" || client == "" || dump == "" {
		return nil, &ErrNotInstalled{What: "MariaDB (mariadbd, mariadb-install-db, mariadb, mariadb-dump)", Hint: MariaDBHint}
	}
	as, err := serverUser("mysql")
	if err != nil {
		return nil, err
	}
	root, err := tempRoot("hfload-mariadb-")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(root, "data")
	m := &MariaDB{as: as, OutDir: filepath.Join(root, "out"), Socket: filepath.Join(data, "mysqld.sock"),
		process: process{name: "mariadbd", root: root}}
	fail := func(err error) (*MariaDB, error) {
		m.Stop()
		return nil, err
	}
	for _, d := range []string{data, m.OutDir} {
		if err := as.mkdir(d); err != nil {
			return fail(err)
		}
	}
	args := []string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=mysql")
	}
	inst := exec.CommandContext(ctx, install, args...)
	inst.Dir = root
	if out, err := inst.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("%s: %w\n%s", filepath.Base(install), err, out))
	}
	if _, err := onFreePort(ctx, func(port int) error { return m.start(ctx, server, data, port) }); err != nil {
		return fail(err)
	}
	if _, err := m.SQL(ctx, "", "CREATE DATABASE test"); err != nil {
		return fail(err)
	}
	return m, nil
}

func (m *MariaDB) start(ctx context.Context, server, data string, port int) error {
	m.Port = port
	args := []string{"--no-defaults", "--datadir=" + data, "--socket=" + m.Socket, "--port=" + strconv.Itoa(m.Port),
		"--bind-address=127.0.0.1", "--secure-file-priv=" + m.OutDir, "--pid-file=" + filepath.Join(data, "mysqld.pid"),
		"--skip-log-bin", "--skip-name-resolve", "--innodb-buffer-pool-size=16M", "--innodb-flush-log-at-trx-commit=0",
		"--log-error=" + filepath.Join(data, "error.log")}
	if os.Geteuid() == 0 {
		args = append(args, "--user=mysql") // mariadbd drops to it itself
	}
	cmd := runAs{}.command(context.Background(), m.root, server, args...)
	ready := func(ctx context.Context) error { _, err := m.SQL(ctx, "", "SELECT 1"); return err }
	errorLog := func() string {
		b, _ := os.ReadFile(filepath.Join(data, "error.log"))
		return string(b)
	}
	return m.process.start(ctx, cmd, ready, errorLog)
}

// ClientArgs are the arguments that connect the mariadb client or mariadb-dump as root, without
// option files.
func (m *MariaDB) ClientArgs() []string {
	return []string{"--no-defaults", "--socket=" + m.Socket, "-u", "root"}
}

// SQL runs statements with the mariadb client in database db ("" = none) and returns its output
// (tab-separated, no column names).
func (m *MariaDB) SQL(ctx context.Context, db, statements string, extra ...string) ([]byte, error) {
	_, _, client, _ := mariadbBins()
	args := append(m.ClientArgs(), extra...)
	args = append(args, "-e", statements)
	if db != "" {
		args = append(args, db)
	}
	return run(ctx, "", client, args...)
}

// Client runs the mariadb client with args after the connection arguments.
func (m *MariaDB) Client(ctx context.Context, args ...string) ([]byte, error) {
	_, _, client, _ := mariadbBins()
	return run(ctx, "", client, append(m.ClientArgs(), args...)...)
}

// Dump runs mariadb-dump (mysqldump) with args after the connection arguments.
func (m *MariaDB) Dump(ctx context.Context, args ...string) ([]byte, error) {
	_, _, _, dump := mariadbBins()
	return run(ctx, "", dump, append(m.ClientArgs(), args...)...)
}

// Stop shuts the server down and removes its directory.
func (m *MariaDB) Stop() { m.stop(syscall.SIGTERM) }

// TabDir makes the directory OutDir/sub, writable by the server and the tests, for mysqldump --tab.
func (m *MariaDB) TabDir(sub string) (string, error) {
	dir := filepath.Join(m.OutDir, sub)
	if err := m.as.mkdir(dir); err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o777)
}
