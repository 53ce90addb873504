// Package pipeline is everything between an input file and HBase cells: sources read CSV and Parquet
// into Batches (see batch.go); a Mapping, compiled from a MappingConfig (job YAML) or an ImportTsv
// column spec (ParseColumns), types and encodes each field, builds the row key and qualifiers, and
// emits the cells once, as cellrec records (one per input row and family: row key, family, timestamp
// and type stored once, fixed qualifiers as indexes into the mapping's Dict), into a worker's
// CellBatch; rows that cannot be mapped go to a RejectSink (JSON Lines) under a reject limit; Run fans
// batches out to workers and reconciles Counts. CellBatch.KeyValues expands records into KeyValues.
//
// Output is deterministic: every record carries Seq = SeqOf(file, row), rejects are written in input
// order, and nothing reads the clock (the job's timestamp comes in RunOptions).
package pipeline
