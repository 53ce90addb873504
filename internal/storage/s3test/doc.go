// Package s3test runs a private Versity S3 gateway (versitygw, posix backend) on loopback for tests:
// a real S3 server, never a mock. A package's TestMain starts one for all its tests (Main); each test
// asks for it with Gateway.Need, which skips with an install hint where the gateway is not installed
// and fails instead under CI (CI=true or HFLOAD_CI=1).
package s3test
