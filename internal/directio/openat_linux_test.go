//go:build linux

package directio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/hfload/hfload/internal/hugepage"
)

// TestOpenatName: openatName creates and opens what syscall.Openat does, and fails as it does, for
// names in its stack buffer, one byte short of it, of its size and longer (syscall's way), relative to
// a directory and whole paths, and a name holding a NUL (EINVAL); its buffer does not leave the stack.
func TestOpenatName(t *testing.T) {
	dir := t.TempDir()
	dfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(dfd)
	for _, n := range []int{1, 40, nameBuf - 1, nameBuf, nameBuf + 1} {
		name := strings.Repeat("n", min(n, 255)) // a file name is at most 255 bytes
		if n > 255 {
			name = "d/" + strings.Repeat("m", n-2) // longer: through a directory, too long a last name
		}
		for _, at := range []int{dfd, atFDCWD} {
			p := name
			if at == atFDCWD {
				p = filepath.Join(dir, name)
			}
			flag := os.O_CREATE | os.O_EXCL | os.O_WRONLY | syscall.O_CLOEXEC
			fd, err := openatName(at, p, flag, 0o600)
			_, wantErr := syscall.Openat(at, p, flag, 0o600) // the second create: EEXIST if the first made it
			if err != nil {
				if !errors.Is(wantErr, err) {
					t.Fatalf("len %d: openatName: %v, syscall then: %v", n, err, wantErr)
				}
				continue
			}
			syscall.Close(fd)
			if !errors.Is(wantErr, syscall.EEXIST) {
				t.Fatalf("len %d: openatName made no file (syscall then: %v)", n, wantErr)
			}
			if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("len %d: %v %v", n, st, err)
			}
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := openatName(dfd, "a\x00b", os.O_RDONLY, 0); err != syscall.EINVAL {
		t.Fatalf("a name with a NUL: %v, want EINVAL", err)
	}
	if _, err := openatName(dfd, "missing", os.O_RDONLY, 0); err != syscall.ENOENT {
		t.Fatalf("a missing file: %v, want ENOENT", err)
	}
	if a := testing.AllocsPerRun(20, func() {
		if fd, err := openatName(dfd, ".", os.O_RDONLY|syscall.O_CLOEXEC, 0); err == nil {
			syscall.Close(fd)
		}
	}); a != 0 {
		t.Fatalf("openatName allocates %v objects, want none", a)
	}
}

// TestBuffersHugePages: the chunks Buffers cuts buffers from are aligned to hugepage.Size and ask for
// transparent huge pages: smaps shows the mapping that holds a buffer with the hg flag (MADV_HUGEPAGE).
func TestBuffersHugePages(t *testing.T) {
	var bufs Buffers
	b := bufs.get(64 << 10)
	addr := uintptr(unsafe.Pointer(&b[0]))
	if addr%hugepage.Size != 0 {
		t.Fatalf("a new chunk's first buffer at %#x: not aligned to %d", addr, hugepage.Size)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	in := false
	for _, line := range strings.Split(string(smaps), "\n") {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 { // a mapping's first line
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			if !strings.Contains(line, " hg") {
				t.Errorf("the buffer's mapping does not ask for huge pages: %s", line)
			}
			return
		}
	}
	t.Fatalf("no mapping in smaps holds %#x", addr)
}
