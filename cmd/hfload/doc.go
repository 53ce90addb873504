// Command hfload turns relational exports (CSV, Parquet) into Apache HBase HFiles ready for
// `hbase completebulkload`. This package is the command line only: flags, progress and exit codes;
// the work happens in jobs (job files, staging, manifests, state) and internal/engine (the load).
package main
