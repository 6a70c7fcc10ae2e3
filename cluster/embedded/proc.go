package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/internal/proc"
)

// Environment variables that tag every process kubelab starts, so that a
// later run can find and remove orphans by reading /proc.
const (
	envCluster   = "KUBELAB_CLUSTER"
	envComponent = "KUBELAB_COMPONENT"
	envHome      = "KUBELAB_HOME"
	// EnvHostname asks the component runner to set its hostname (it runs in
	// its own UTS namespace) before the component starts; see SetHostname.
	EnvHostname = "KUBELAB_HOSTNAME"
)

// spawner starts processes from one OS thread that never exits: Linux
// delivers Pdeathsig when the thread that forked a child exits, and Go
// may retire threads, so children must be forked from a locked thread.
type spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var theSpawner spawner

func (s *spawner) start(cmd *exec.Cmd) error {
	s.once.Do(func() {
		s.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range s.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	s.reqs <- spawnReq{cmd, done}
	return <-done
}

// procSpec is how to start one component process; it is saved in the
// cluster's state so any later kubelab invocation can start it again.
type procSpec struct {
	Name     string   `json:"name"`
	Role     string   `json:"role"`
	Args     []string `json:"args"`               // arguments after "kubelab"
	Hostname string   `json:"hostname,omitempty"` // own UTS namespace with this hostname
	Endpoint string   `json:"endpoint,omitempty"`
	// HTTP serves an etcd member's HTTP endpoints (/metrics, /health)
	// apart from Endpoint, which serves gRPC alone.
	HTTP    string `json:"http,omitempty"`
	Log     string `json:"log"`
	PID     int    `json:"pid,omitempty"`
	Stopped bool   `json:"stopped,omitempty"` // stopped on purpose
	// Virtual components have no process of their own: simulated nodes,
	// which the kwok process heartbeats while they run.
	Virtual bool `json:"virtual,omitempty"`
}

// children tracks processes this kubelab process started, so it can reap
// them and tell "exited" from "still running" without racing on PIDs.
var children = struct {
	sync.Mutex
	m map[int]*child
}{m: map[int]*child{}}

type child struct {
	done chan struct{}
	err  error // from Wait, once done is closed
}

// exitNote describes how a child of this process ended ("" if unknown).
func exitNote(pid int) string {
	children.Lock()
	c, ok := children.m[pid]
	children.Unlock()
	if !ok {
		return ""
	}
	select {
	case <-c.done:
		if c.err == nil {
			return " (exit status 0)"
		}
		return " (" + c.err.Error() + ")"
	default:
		return ""
	}
}

// procCmd is the command that runs spec, in a UTS namespace of its own
// (named spec.Hostname) when uts is set.
func procCmd(self, home, cluster string, spec *procSpec, logf *os.File, ephemeral, uts bool) *exec.Cmd {
	cmd := exec.Command(self, spec.Args...)
	cmd.Env = append(os.Environ(),
		envCluster+"="+cluster, envComponent+"="+spec.Name, envHome+"="+home)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = filepath.Dir(spec.Log)
	attr := &syscall.SysProcAttr{Setpgid: true}
	if ephemeral {
		attr.Pdeathsig = syscall.SIGKILL
	}
	if spec.Hostname != "" {
		cmd.Env = append(cmd.Env, EnvHostname+"="+spec.Hostname)
	}
	if uts {
		attr.Cloneflags = syscall.CLONE_NEWUTS
		if os.Geteuid() != 0 {
			// Unprivileged: a user namespace grants the UTS namespace.
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		}
	}
	cmd.SysProcAttr = attr
	return cmd
}

// startProc starts spec as a child process tagged with the cluster name.
// ephemeral children die with this process (Pdeathsig).
func startProc(self, home, cluster string, spec *procSpec, ephemeral bool, env ...string) error {
	logf, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "---- kubelab: starting %s at %s\n", spec.Name, time.Now().Format(time.RFC3339Nano))
	cmd := procCmd(self, home, cluster, spec, logf, ephemeral, spec.Hostname != "")
	cmd.Env = append(cmd.Env, env...)
	err = theSpawner.start(cmd)
	if err != nil && spec.Hostname != "" {
		// No namespaces to be had (an unprivileged container, e.g. a
		// class-grading pod): run with the host's hostname rather than not
		// at all. An exec.Cmd cannot be started twice: make a new one.
		cmd = procCmd(self, home, cluster, spec, logf, ephemeral, false)
		cmd.Env = append(cmd.Env, env...)
		err = theSpawner.start(cmd)
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", spec.Name, err)
	}
	spec.PID, spec.Stopped = cmd.Process.Pid, false
	c := &child{done: make(chan struct{})}
	children.Lock()
	children.m[spec.PID] = c
	children.Unlock()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return nil
}

// procAlive reports whether pid is a live process of this cluster's
// component (not a zombie, not a recycled PID).
func procAlive(pid int, cluster, component string) bool {
	if pid <= 0 {
		return false
	}
	children.Lock()
	c, mine := children.m[pid]
	children.Unlock()
	if mine {
		// Our own child: Wait says when it ends. (Its /proc entry is no
		// witness right after start: while the kernel finishes exec the
		// environment reads empty.)
		select {
		case <-c.done:
			return false
		default:
			return true
		}
	}
	st := procState(pid)
	if st == "" || st == "Z" || st == "X" {
		return false
	}
	env := procEnv(pid)
	if len(env) == 0 && st == "D" {
		return true // mid-exec: the environment is not readable yet
	}
	return env[envCluster] == cluster && env[envComponent] == component
}

// procState is the one-letter state of a process ("" if gone).
func procState(pid int) string { return proc.State(pid) }

func procEnv(pid int) map[string]string { return proc.Environ(pid, "KUBELAB_") }

// waitGone waits until pid has exited or ctx ends. It sleeps on the
// process's pidfd, which the kernel makes readable the moment the process
// exits, so a killed component is seen gone at once rather than at the
// next tick of a poll; each wait is bounded, for ctx and for a pid that
// another process took.
func waitGone(ctx context.Context, pid int, cluster, component string) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fd = -1 // no pidfd (an old kernel): poll /proc alone
	} else {
		defer unix.Close(fd)
	}
	for procAlive(pid, cluster, component) {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s (pid %d) still running: %w", component, pid, err)
		}
		if fd < 0 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 20); n > 0 {
			// Exited; our own child still has to be reaped by its Wait.
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// terminate stops a process gracefully (SIGCONT then SIGTERM), escalating
// to SIGKILL after grace.
func terminate(ctx context.Context, pid int, cluster, component string, grace time.Duration) error {
	if !procAlive(pid, cluster, component) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGCONT)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s: %w", component, err)
	}
	gctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	if waitGone(gctx, pid, cluster, component) == nil {
		return nil
	}
	return kill(ctx, pid, cluster, component)
}

// kill sends SIGKILL and waits for the process to be gone.
func kill(ctx context.Context, pid int, cluster, component string) error {
	if !procAlive(pid, cluster, component) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s: %w", component, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return waitGone(ctx, pid, cluster, component)
}

// tagged lists every live process carrying kubelab's tags, by cluster.
type taggedProc struct {
	PID       int
	Home      string
	Cluster   string
	Component string
}

func taggedProcs() []taggedProc {
	var out []taggedProc
	self := os.Getpid()
	for _, pid := range proc.PIDs() {
		if pid == self {
			continue
		}
		env := procEnv(pid)
		if env[envCluster] == "" || env[envComponent] == "" {
			continue
		}
		if st := procState(pid); st == "Z" || st == "" {
			continue
		}
		out = append(out, taggedProc{PID: pid, Home: env[envHome], Cluster: env[envCluster], Component: env[envComponent]})
	}
	return out
}

// Running lists the embedded clusters, of any home, that have live
// processes on this machine (see cluster.Running).
func Running() []cluster.Running {
	var each []cluster.Running
	for _, p := range taggedProcs() {
		each = append(each, cluster.Running{Backend: "embedded", Name: p.Cluster, Where: "home " + p.Home})
	}
	return cluster.Tally(each)
}
