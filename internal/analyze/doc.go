// Package analyze is the engine of `hfload analyze`: it consumes the mapped cells of a run (the
// pipeline's CellBatches), reading the records in place, and reports what a bulk load of them would
// look like in HBase, before any HFile is written:
//
//   - uniqueness: duplicate row keys (a key produced again by a different input row) and duplicate
//     cells (same row, family, qualifier, timestamp and type), counted exactly: row-key fingerprints in
//     the first pass, and, only when fingerprints repeat, a second pass over the input that confirms
//     the suspects on the keys (Analyzer.Suspects, Analyzer.Confirm);
//   - distribution: cells and bytes per region under the split points in force, empty and hot
//     regions, and input that arrives in ascending key order (a write hotspot);
//   - size overhead: how many bytes row keys, family and qualifier names cost per value byte, what
//     shorter names would save, and numbers stored as decimal text;
//   - suggested split points of equal bytes with the HBase shell command creating the table.
//
// The Report is JSON-encodable (a stable contract: see Report) and has a text form.
package analyze
