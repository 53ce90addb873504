// Package testdb starts private database servers for tests: a PostgreSQL and a MariaDB (or MySQL)
// instance, each with its own data directory in a temporary directory, listening on a loopback port
// and a socket of its own, never a system service, stopped when the tests end.
//
// A test package holds one Servers value, closes it in TestMain, and asks it for a server; each
// server starts on first use, at most once per package run:
//
//	var servers testdb.Servers
//
//	func TestMain(m *testing.M) { code := m.Run(); servers.Close(); os.Exit(code) }
//
//	func TestX(t *testing.T) { pg := servers.Postgres(t); out, err := pg.Psql(ctx, "SELECT 1") ... }
//
// Without the binaries a test skips with a message saying how to install them; under CI (CI=true or
// HFLOAD_CI=1) it fails instead. When the process runs as root, PostgreSQL (which refuses root) runs as
// the "postgres" user and MariaDB as "mysql", the users the Debian packages create.
package testdb
