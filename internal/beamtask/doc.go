// Package beamtask holds the tasks of a distributed hfload run, shaped like MapReduce's total-order
// sort, without any Beam in them: planning work units, sampling split points in parts, the map task
// (one unit's rows to records, routed to (region, family) and sorted with hfload's sorter into sorted
// run files, with an index of row offsets, on shared storage), the reduce task (a k-way merge of every
// sorted run of one (region, family), or of a sub-range of it read through the indexes, into that
// region's HFiles; no second sort) and the
// collection of their summaries into the LoadResult `hfload run` would have produced.
//
// internal/beamrun wires these tasks into a Beam pipeline; cmd/hfload-beam is the command. Keeping
// Beam out of this package keeps its tests fast and lets other drivers call the same tasks.
//
// Every task takes a Task (the job as YAML and the run's start time: each worker prepares the same
// RunSpec from it) and writes its outputs under deterministic names, first to a name unique to the
// attempt and then renamed: a retried or speculative attempt leaves the same bytes, and the launcher
// commits once, after the pipeline has succeeded.
package beamtask
