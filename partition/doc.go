// Package partition computes region split points and routes row keys to regions.
//
// A table with split points s[0] < s[1] < ... < s[n-1] has n+1 regions; region i holds the row keys
// in [s[i-1], s[i]) compared as unsigned bytes, with region 0 starting at the empty key (table start)
// and region n ending at the empty key (table end). This is how HBase assigns rows to regions, so a
// bulk-load file built for region i is adopted whole by `completebulkload` without splitting.
//
// Split points come from five sources:
//
//   - ParseSplits: a file of keys in HBase's Bytes.toStringBinary notation (the format of the shell's
//     SPLITS_FILE), tolerating keys pasted from a `create ... SPLITS => [...]` command;
//   - Uniform: n regions over a declared key alphabet (hex, decimal, raw bytes), splitting only where
//     keys can exist;
//   - BySalt: one region per leading salt byte;
//   - Sampler: a bounded, deterministic sample of the data, split into regions of roughly equal bytes;
//   - FetchRESTSplits: the current regions of a live table, read from HBase's REST server.
//
// CreateTableCommand turns split points into an HBase shell `create` command.
package partition
