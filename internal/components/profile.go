package components

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"
)

// EnvCPUProfile names a directory: a component started with it writes
// the CPU profile of its first profileSpan there, as NAME-PID.pprof (where
// a boot's CPU goes: go tool pprof -top FILE).
const EnvCPUProfile = "KUBELAB_CPUPROFILE"

// EnvCPUProfileSpan overrides profileSpan with a Go duration ("5m"): to
// profile a workload after the boot, such as bench scale's pods.
const EnvCPUProfileSpan = "KUBELAB_CPUPROFILE_SPAN"

const profileSpan = 10 * time.Second

// profileStart starts profiling when EnvCPUProfile is set.
func profileStart(name string) {
	dir := os.Getenv(EnvCPUProfile)
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", name, os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubelab: cpu profile:", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "kubelab: cpu profile:", err)
		f.Close()
		return
	}
	span := profileSpan
	if d, err := time.ParseDuration(os.Getenv(EnvCPUProfileSpan)); err == nil && d > 0 {
		span = d
	}
	time.AfterFunc(span, func() {
		pprof.StopCPUProfile()
		f.Close()
	})
}
