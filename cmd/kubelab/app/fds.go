package app

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseInheritedFDs marks every file descriptor above stderr close-on-exec.
//
// Whatever ran kubelab may have left descriptors open without that flag (a
// `flock LOCK kubelab up` holds the lock on fd 3, a CI runner its pipes),
// and every process kubelab starts (components that outlive `kubelab up`,
// the docker reaper) would inherit them and keep the lock held or the pipe
// open until the cluster is removed. main calls this before anything
// starts; descriptors kubelab opens itself already carry the flag.
func CloseInheritedFDs() error {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	own := int(d.Fd())
	d.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd <= 2 || fd == own {
			continue
		}
		unix.CloseOnExec(fd)
	}
	return nil
}
