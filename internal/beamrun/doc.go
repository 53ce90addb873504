// Package beamrun runs a distributed hfload load as an Apache Beam pipeline (Go SDK): the tasks of
// internal/beamtask as DoFns. It imports the Beam core only; the runners are linked by the command
// (cmd/hfload-beam) and by this package's tests (Prism, in process).
//
// The pipeline:
//
//	units ─ Reshuffle ─┬─ (split_sample) Sample ─ Combine(MergeSamples) ─ Splits ─┐ side input
//	                   └─ Map ◄───────────────────────────────────────────────────┘
//	                       │ KV<target, run file>: only references travel through the shuffle
//	                   GroupByKey ─ Reduce (external sorter → HFiles in the staging directory)
//
// Results come back through the shared directory (summaries), not through the pipeline: the launcher
// collects them after the pipeline succeeded (beamtask.Collect) and commits once.
package beamrun
