package app

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCloseInheritedFDsMarksEveryDescriptorAboveStderr(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// dup(2) clears close-on-exec, as for a descriptor inherited from a
	// parent that did not set it.
	fd, err := unix.Dup(int(w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC != 0 {
		t.Fatal("dup'd descriptor already close-on-exec; the test proves nothing")
	}
	if err := CloseInheritedFDs(); err != nil {
		t.Fatal(err)
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("fd %d is still inherited by children (flags %#x)", fd, flags)
	}
	for _, std := range []int{0, 1, 2} {
		if flags, err := unix.FcntlInt(uintptr(std), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC != 0 {
			t.Errorf("fd %d marked close-on-exec: children would lose it", std)
		}
	}
}
