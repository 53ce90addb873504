// Package engine is the load engine: from sources, a mapping, split points and family settings to
// sorted HFiles written to a Sink. Load reads the inputs and maps rows to records (pipeline), routes
// each record to the sorter of its region and family, samples row keys for computed splits
// (partition), sorts within the memory budget (sorter), then merges every (region, family) stream,
// applies the duplicate policy, rolls files at MaxFileSize on row boundaries and writes and verifies
// the HFiles (hfilewriter), several streams at a time.
//
// It knows nothing of job files, state directories, locks, staging or manifests: package jobs builds
// a Spec from a job and commits what Load wrote. The Sink says where files go: DirSink writes a local
// directory; an object store or a distributed runner's work unit implements Sink (Create a file for
// a family and name, then Close or Abort it), and Reopener when files must be read back to verify.
package engine
