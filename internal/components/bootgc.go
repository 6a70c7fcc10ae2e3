package components

import (
	"math"
	"os"
	"runtime/debug"
	"time"
)

// A component's start allocates fast and keeps little: an apiserver
// builds every API group's handlers, OpenAPI specs and watch caches, and
// with the default GOGC=100 its heap doubles from a few MiB to its working
// size through half a dozen collections, each marking what is live. On
// two cores shared by the whole cluster those collections are boot time:
// with collection off, an HA cluster (3 etcd, 2 apiservers, 2+2
// controllers, 3 nodes) was usable 15% sooner.
//
// So for its first bootGCWindow a component collects only when its heap
// reaches bootGCLimit (a small cluster's boot stays far below it: the heap
// of a minimal cluster's apiserver grows by ~150 MiB; at 4,000 nodes the
// apiserver reaches it and collects there), then goes back to GOGC=100 and
// returns the garbage of its start to the system in one collection. Only
// the runtime's collector is tuned: the code that runs is upstream's. A
// GOGC or GOMEMLIMIT in the environment is the user's choice and left
// alone.
const (
	bootGCWindow = 10 * time.Second
	bootGCLimit  = 1 << 30
)

// bootGC turns collection off for the component's start, as above.
func bootGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(bootGCLimit)
	debug.SetGCPercent(-1)
	time.AfterFunc(bootGCWindow, func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		debug.FreeOSMemory()
	})
}
