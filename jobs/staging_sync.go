package jobs

import (
	"os"
	"sync/atomic"
)

// stagingSyncer makes a staging directory's files durable at commit. On Linux it holds the staging
// directory open from its creation, so that one syncfs(2) at commit writes back every file of the run
// and reports any writeback error on that file system since then (Linux 5.8 on); elsewhere, and on
// older kernels whose syncfs reports no errors, it fsyncs every file and directory (syncTree). One
// fsync per file waits for the device once per file: 10,000 small HFiles took 20 s that way on a test
// VM, one syncfs 0.6 s.
//
// With syncfs, the files are also written back while the run still writes (earlyWriteback): the
// commit's syncfs then finds only the last few hundred files dirty instead of all of them.
//
// The commit starts the sync in the background as soon as the load has written its last file (start),
// and waits for it (wait) only before it writes the manifest: the wait for the device then overlaps
// the manifest's building and the check of the staged files.
type stagingSyncer struct {
	dir   *os.File        // the staging dir, open since its creation (nil: fsync per file)
	early *earlyWriteback // nil without syncfs

	done chan struct{} // closed when the sync start began has ended (nil: not started)
	err  error         // the sync's error, once done is closed
}

// openStagingSyncer prepares the commit-time sync of dir; call it right after creating dir, before
// any file is written under it.
func openStagingSyncer(dir string) *stagingSyncer {
	s := &stagingSyncer{}
	if syncfsReportsErrors() {
		if f, err := os.Open(dir); err == nil {
			s.dir = f
			s.early = startEarlyWriteback(dir)
		}
	}
	return s
}

// fileWritten tells the syncer that one more file under the staging dir is complete.
func (s *stagingSyncer) fileWritten() {
	if s.early != nil {
		s.early.fileWritten()
	}
}

// sync makes every file and directory under root durable.
func (s *stagingSyncer) sync(root string) error {
	if s.dir == nil {
		return syncTree(root)
	}
	s.early.stop()
	return syncFS(s.dir)
}

// start runs sync(root) in the background; nothing may be written under root after it until wait
// returns. A second start does nothing.
func (s *stagingSyncer) start(root string) {
	if s.done != nil {
		return
	}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.err = s.sync(root)
	}()
}

// wait waits for the sync start began and returns its error.
func (s *stagingSyncer) wait() error {
	<-s.done
	return s.err
}

// close waits for a sync that was started and releases the open directory.
func (s *stagingSyncer) close() {
	if s.done != nil {
		<-s.done
	}
	if s.dir != nil {
		s.early.stop()
		s.dir.Close()
		s.dir = nil
	}
}

// earlyWritebackFiles is how many completed files start a background syncfs.
const earlyWritebackFiles = 512

// earlyWriteback runs syncfs in the background, after every earlyWritebackFiles files a run
// completes, so that the file system writes the run's small files back while the run goes on (the
// kernel's flusher merges a batch of files' blocks into few large writes; starting each file's
// writeback on its own at close, sync_file_range, made 10,000 small writes and slowed the run). It is
// no part of durability: the commit's syncfs on the staging syncer's own descriptor still writes what
// is left and reports every writeback error since the staging dir was created. The background syncs
// use a descriptor of their own because syncfs reports an error once per open file (errseq in
// fs/sync.c): an error a background sync saw, and dropped, is still reported to the commit.
type earlyWriteback struct {
	f       *os.File
	files   atomic.Int64
	syncs   atomic.Int64 // background syncfs calls made (tests)
	nudge   chan struct{}
	quit    chan struct{}
	done    chan struct{}
	stopped bool
}

// startEarlyWriteback opens dir for the background syncs and starts their goroutine; nil if dir
// cannot be opened (the commit's syncfs then does all the writing, as before).
func startEarlyWriteback(dir string) *earlyWriteback {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	e := &earlyWriteback{f: f, nudge: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go e.loop()
	return e
}

func (e *earlyWriteback) loop() {
	defer close(e.done)
	for {
		select {
		case <-e.quit:
			return
		case <-e.nudge:
			_ = syncFS(e.f) // errors reach the commit's syncfs (see earlyWriteback)
			e.syncs.Add(1)
		}
	}
}

// fileWritten counts a completed file and nudges the goroutine at every earlyWritebackFiles-th one
// (a nudge while a sync runs starts one more after it; more are dropped). Safe for concurrent use.
func (e *earlyWriteback) fileWritten() {
	if e.files.Add(1)%earlyWritebackFiles != 0 {
		return
	}
	select {
	case e.nudge <- struct{}{}:
	default:
	}
}

// stop ends the goroutine (after a sync it is running) and closes the descriptor. Not safe for
// concurrent use with itself; idempotent; nil is a no-op.
func (e *earlyWriteback) stop() {
	if e == nil || e.stopped {
		return
	}
	e.stopped = true
	close(e.quit)
	<-e.done
	e.f.Close()
}
