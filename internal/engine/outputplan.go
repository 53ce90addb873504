package engine

import "github.com/hfload/hfload/internal/directio"

// Output buffers: an HFile is written through directio buffers of up to maxOutputBuffer bytes (large
// writes keep the disk busy: see directio.NewWriter), and the buffers of all HFiles written at once take
// at most a quarter of the sorter's budget.
const (
	maxOutputBuffer = 4 << 20
	minOutputBuffer = 64 << 10
	// smallFileBuffer is the least buffer size planOutput caps small files' buffers at: a file much
	// larger than expected (a region holding most of the data) is still written in writes this large.
	smallFileBuffer = 256 << 10
	// fileWrites is the least number of writes a file of the planned KeyValue bytes is written in
	// (fileWriteSize): its compressed HFile takes fewer, a larger region more.
	fileWrites = 64
)

// outputBufferSize is the directio buffer size of each of files HFiles written at once from a budget.
func outputBufferSize(budget int64, files int) int {
	size := budget / 4 / int64(max(files, 1)) / directio.WriterBuffers
	size = min(max(size, minOutputBuffer), maxOutputBuffer)
	return int(size) &^ (minOutputBuffer - 1)
}

// fileBufferSize caps a buffer size at what a file of about fileBytes bytes uses: directio.Writer's
// buffers start small and double while the file grows, so such a file never fills more than buffers
// of twice its size, and reserving WriterBuffers buffers of the largest size for it (many regions:
// small files) would hold budget that the sorted records need. fileBytes 0: unknown, no cap.
func fileBufferSize(size int, fileBytes int64) int {
	if fileBytes <= 0 {
		return size
	}
	want := smallFileBuffer
	for int64(want) < 2*fileBytes && want < size {
		want *= 2
	}
	return min(size, want)
}

// fileWriteSize is the buffer size a file of about fileBytes KeyValue bytes is written with, for a
// plan of buffers of size bytes: a power of two of at most a fileWrites'th of the file (at least
// smallFileBuffer), at most size. The plan reserves buffers of size (the budget's share, capped by
// fileBufferSize) for every file; filled, they are fresh memory the files do not need: a region of a
// few MiB of HFile written through WriterBuffers buffers of the share holds about its whole size in
// buffers (families-5 at 1M rows: 25 files of 2.8 MiB, 47 MiB of 640 KiB buffers; customer-order 5
// files of 13 MiB, 23 MiB of 1.6 MiB buffers), and each MiB of it costs ~5 ms of page faults on the
// benchmark VM. Writes of a few hundred KiB keep the disk busy enough for files this small, which are
// a small part of a run's time; files of hundreds of MiB (a 1 GB load) keep the share's size.
// fileBytes 0: unknown, size.
func fileWriteSize(size int, fileBytes int64) int {
	if fileBytes <= 0 {
		return size
	}
	want := smallFileBuffer
	for want < size && int64(2*want) <= fileBytes/fileWrites {
		want *= 2
	}
	return min(size, want)
}

// outputPlan is how the write phase buffers its files.
type outputPlan struct {
	workers int   // write tasks at once
	bufSize int   // each file's directio buffer size (fileWriteSize of planSize)
	perFile int64 // memory one open file holds at most (reserved: WriterMemory of planSize)
	// planSize is the buffer size the memory is planned for (outputBufferSize, capped by
	// fileBufferSize, shared by spread); fileBytes is planOutput's.
	planSize  int
	fileBytes int64
}

// memory is what the files of the tasks written at once hold (files per task).
func (p outputPlan) memory(files int) int64 {
	return int64(p.workers) * int64(files) * p.perFile
}

// planOutput plans the output buffers of `workers` write tasks of `files` files each, from a budget,
// for files of about fileBytes bytes (0: unknown). A sink whose files buffer their bytes themselves
// (upload parts) holds FileMemory per file; they fit in a quarter of the budget, as the write buffers
// do, with fewer tasks at once if need be.
func planOutput(budget int64, sink Sink, files, workers int, fileBytes int64) outputPlan {
	p := outputPlan{workers: workers, fileBytes: fileBytes}
	p.setSize(fileBufferSize(outputBufferSize(budget, workers*files), fileBytes))
	if bs, ok := sink.(BufferingSink); ok {
		p.perFile = bs.FileMemory()
		if fit := budget / 4 / max(p.perFile*int64(files), 1); int64(workers) > fit {
			p.workers = int(max(fit, 1))
		}
	}
	return p
}

// spread shares p's output memory among `at` tasks at once (at > p.workers): smaller buffers, the
// same total (never below minOutputBuffer each). A sink whose files buffer themselves holds a fixed
// amount per file: as many tasks as a quarter of the budget holds, at least p.workers.
func (p outputPlan) spread(budget int64, sink Sink, files, at int) outputPlan {
	if at <= p.workers {
		return p
	}
	if _, ok := sink.(BufferingSink); ok {
		fit := budget / 4 / max(p.perFile*int64(files), 1)
		p.workers = max(p.workers, int(min(int64(at), fit)))
		return p
	}
	size := p.planSize * p.workers / at
	p.setSize(max(minOutputBuffer, size&^(minOutputBuffer-1)))
	p.workers = at
	return p
}

// setSize plans buffers of size bytes: the memory reserved for them, and the size files are written
// with (fileWriteSize).
func (p *outputPlan) setSize(size int) {
	p.planSize = size
	p.bufSize = fileWriteSize(size, p.fileBytes)
	p.perFile = directio.WriterMemory(size)
}
