// Package directio writes and reads large files around the page cache (O_DIRECT on Linux), falling
// back to ordinary I/O where the file system refuses it (tmpfs, some FUSE and network file systems) and
// on other systems.
//
// hfload writes every output byte once and reads it back once to verify it; nothing benefits from
// keeping those bytes cached. On the machines we measured, putting a byte into the page cache cost more
// CPU than producing it (about 3 s of kernel time per GB written or read cold, against 0.2–0.4 s per GB
// with O_DIRECT at over 1 GB/s), so bypassing the cache is the largest single saving of a load.
//
//	f, err := directio.Create(path, 0o644) // O_CREATE|O_EXCL|O_WRONLY
//	w := directio.NewWriter(f, 1<<20)      // aligned buffer; Write as with bufio.Writer
//	... w.Write(b) ...
//	err = w.Close()                        // writes the unaligned tail without O_DIRECT, closes f
//
//	r, err := directio.Open(path)          // an io.ReaderAt reading aligned windows
//	defer r.Close()
package directio
