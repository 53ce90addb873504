// Package servertest starts the real servers that storage tests talk to (the Versity S3 gateway,
// fake-gcs-server, Azurite) as child processes on loopback ports, finds their binaries, and says
// whether tests run under CI (where a missing server fails a test instead of skipping it). s3test and
// cloudtest build their servers on it.
package servertest
