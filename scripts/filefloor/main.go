// Command filefloor writes files of the sizes of an existing output directory's files (-like) into a
// new directory, as hfload's DirSink writes small HFiles: one create relative to the family directory,
// one write, an fstat and a close per file, a background syncfs every 512 files and a final syncfs.
// It prints the wall and CPU time: the floor under what writing that many files costs on this
// machine and file system, whatever produces their bytes.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	like := flag.String("like", "", "an output directory whose files' sizes to write")
	out := flag.String("out", "", "directory to create and write into")
	workers := flag.Int("w", 2, "writers")
	flag.Parse()
	var sizes []int64
	// The HFiles: <like>/<family>/<file>, not the manifest or other side files beside the families.
	err := filepath.WalkDir(*like, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(*like, p); d.Type().IsRegular() && strings.Count(filepath.ToSlash(rel), "/") == 1 {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			sizes = append(sizes, fi.Size())
		}
		return nil
	})
	if err != nil {
		fatal(err)
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] > sizes[j] })
	if len(sizes) == 0 {
		fmt.Fprintln(os.Stderr, "no files under", *like)
		os.Exit(2)
	}
	buf := make([]byte, sizes[0])
	for i := range buf {
		buf[i] = byte(i*7 + i>>9)
	}
	fam := filepath.Join(*out, "d")
	if err := os.MkdirAll(fam, 0o755); err != nil {
		fatal(err)
	}
	dfd, err := unix.Open(fam, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		fatal(fmt.Errorf("open %s: %w", fam, err))
	}
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(0, &ru0)
	t0 := time.Now()
	var next, done atomic.Int64
	nudge := make(chan struct{}, 1)
	go func() {
		for range nudge {
			unix.Syncfs(dfd)
		}
	}()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k := 0; k < *workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var st unix.Stat_t
			for {
				i := int(next.Add(1) - 1)
				if i >= len(sizes) {
					return
				}
				mu.Lock()
				fd, err := unix.Openat(dfd, fmt.Sprintf("f%06d", i), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
				mu.Unlock()
				if err != nil {
					fatal(fmt.Errorf("create in %s: %w", fam, err))
				}
				if _, err := unix.Write(fd, buf[:sizes[i]]); err != nil {
					fatal(fmt.Errorf("write in %s: %w", fam, err))
				}
				unix.Fstat(fd, &st)
				unix.Close(fd)
				if done.Add(1)%512 == 0 {
					select {
					case nudge <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	wg.Wait()
	t1 := time.Now()
	unix.Syncfs(dfd)
	t2 := time.Now()
	syscall.Getrusage(0, &ru1)
	cpu := func(r syscall.Rusage) float64 { return float64(r.Utime.Nano()+r.Stime.Nano()) / 1e9 }
	var total int64
	for _, s := range sizes {
		total += s
	}
	fmt.Printf("%d files, %.1f MiB: write %.3f s, final syncfs %.3f s, wall %.3f s, cpu %.3f s (sys %.3f)\n",
		len(sizes), float64(total)/(1<<20), t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), t2.Sub(t0).Seconds(),
		cpu(ru1)-cpu(ru0), float64(ru1.Stime.Nano()-ru0.Stime.Nano())/1e9)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "filefloor:", err)
	os.Exit(1)
}
