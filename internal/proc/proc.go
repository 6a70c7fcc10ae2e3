// Package proc reads what kubelab needs to know of Linux processes (state,
// start time, environment, the list of processes) from /proc, in one
// place, with prometheus/procfs. It changes nothing.
package proc

import (
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// Stat is a process's state letter (R, S, D, T, Z...) and its start time in
// clock ticks since boot, as text: with the PID it names one process for
// the life of the machine (a PID can be reused, a PID and start time not).
func Stat(pid int) (state, start string) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return "", ""
	}
	st, err := p.Stat()
	if err != nil {
		return "", ""
	}
	return st.State, strconv.FormatUint(st.Starttime, 10)
}

// StartTime is Stat's start time ("" when the process is gone).
func StartTime(pid int) string {
	_, s := Stat(pid)
	return s
}

// State is Stat's state letter ("" when the process is gone).
func State(pid int) string {
	s, _ := Stat(pid)
	return s
}

// Environ returns the variables of a process's environment whose names
// start with prefix (nil when it cannot be read).
func Environ(pid int, prefix string) map[string]string {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return nil
	}
	vars, err := p.Environ()
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, kv := range vars {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}

// PIDs lists the processes of the machine.
func PIDs() []int {
	ps, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.PID
	}
	return out
}
