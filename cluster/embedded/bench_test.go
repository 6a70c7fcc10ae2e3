package embedded

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/lifecycle"
)

// BenchmarkUpHA measures `up` of the HA topology (3 etcd, 2 apiservers, 2
// schedulers, 2 controller-managers, 3 nodes): seconds until the boot's
// waits are over (s/all-ready: every apiserver ready, the nodes Ready, the
// default ServiceAccount made, DNS answering), seconds until Up returns
// (s/usable; `kubelab bench up` prints each phase), and the memory of
// its processes once up: RSS summed over processes (counts the shared binary's
// pages once per process) and PSS (each shared page counted once overall). Targets on a 2-core machine: <= 6 s, <= 1.2 GiB.
//
// The sub-benchmarks run the control plane as upstream ships it (no audit
// log, no decision log), with the apiservers' audit log (audit(),
// trace()), and with the schedulers' decision log too (scheduling(), the
// default), to show what each costs.
//
//	go test ./cluster/embedded -run '^$' -bench UpHA -benchtime 3x
func BenchmarkUpHA(b *testing.B) {
	for _, c := range []struct{ audit, record bool }{{false, false}, {true, false}, {true, true}} {
		b.Run(fmt.Sprintf("audited=%t_recorded=%t", c.audit, c.record), func(b *testing.B) { benchUpHA(b, c.audit, c.record) })
	}
}

func benchUpHA(b *testing.B, audit, record bool) {
	bin, err := binaryPath()
	if err != nil {
		b.Fatal(err)
	}
	var upSecs, readySecs, rssMiB, pssMiB float64
	phases := map[string]float64{}
	for i := 0; i < b.N; i++ {
		home := b.TempDir()
		topo := cluster.Topology{Name: fmt.Sprintf("bench-%t-%t", audit, record), Etcd: 3, APIServers: 2, Schedulers: 2, ControllerManagers: 2, Workers: 3,
			Scheduler: cluster.SchedulerSpec{Record: &record}, Audit: &audit}
		be, err := New(topo,
			Options{Home: Home(home), Binary: bin, Ephemeral: true})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		err = be.Up(context.Background(), func(e cluster.Event) {
			if e.Message == lifecycle.EventControlPlaneReady {
				readySecs += e.Elapsed.Seconds()
			}
			if e.Message == "ready" {
				role := strings.TrimRight(e.Component, "-0123456789")
				phases[role] = max(phases[role], e.Elapsed.Seconds())
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		upSecs += time.Since(start).Seconds()
		time.Sleep(2 * time.Second) // let every component settle before measuring memory
		for _, p := range procsOf(home) {
			rssMiB += float64(memKiB(p.PID, "/status", "VmRSS:")) / 1024
			pssMiB += float64(memKiB(p.PID, "/smaps_rollup", "Pss:")) / 1024
		}
		if err := be.Down(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(readySecs/n, "s/all-ready")
	b.ReportMetric(upSecs/n, "s/usable")
	b.ReportMetric(rssMiB/n, "MiB-RSS")
	b.ReportMetric(pssMiB/n, "MiB-PSS")
	for role, s := range phases {
		b.Logf("%-26s last ready at %.2fs (worst of %d runs)", role, s, b.N)
	}
}

func memKiB(pid int, file, field string) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d%s", pid, file))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			var kib int
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kib)
			return kib
		}
	}
	return 0
}
