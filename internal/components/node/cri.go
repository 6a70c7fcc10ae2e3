package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"

	"kubelab.dev/kubelab/observe"
)

// runCRI prints, as JSON, what the node's container runtime reports over
// the CRI (the calls the kubelet makes): every pod sandbox and container,
// with the network namespace each process is in, so a lab can see that a
// pod's containers join the namespace its pause sandbox holds. It runs
// inside a node: `kubelab component cri [ENDPOINT]`.
func runCRI() int {
	endpoint := "unix:///run/containerd/containerd.sock"
	if len(os.Args) > 1 {
		endpoint = os.Args[1]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := criState(ctx, endpoint)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cri:", err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "cri:", err)
		return 1
	}
	return 0
}

func criState(ctx context.Context, endpoint string) (observe.CRI, error) {
	var out observe.CRI
	rs, err := remote.NewRemoteRuntimeService(ctx, endpoint, callTimeout, noop.NewTracerProvider(), false)
	if err != nil {
		return out, fmt.Errorf("connect %s: %w", endpoint, err)
	}
	sandboxes, err := rs.ListPodSandbox(ctx, nil)
	if err != nil {
		return out, fmt.Errorf("ListPodSandbox: %w", err)
	}
	names := map[string]string{}
	for _, s := range sandboxes {
		sb := observe.Sandbox{ID: s.Id, Pod: s.Metadata.Name, Namespace: s.Metadata.Namespace, State: s.State.String(), RuntimeHandler: s.RuntimeHandler}
		st, err := statusOf(ctx, func() (*runtimeapi.PodSandboxStatusResponse, error) { return rs.PodSandboxStatus(ctx, s.Id, true) })
		if err != nil {
			sb.Error = "PodSandboxStatus: " + err.Error()
		} else {
			sb.PID, sb.Image = verbosePID(st.Info), verboseImage(st.Info)
			if st.Status.Network != nil {
				sb.IP = st.Status.Network.Ip
			}
		}
		sb.NetNS = netns(sb.PID)
		names[s.Id] = s.Metadata.Name
		out.Sandboxes = append(out.Sandboxes, sb)
	}
	cs, err := rs.ListContainers(ctx, &runtimeapi.ContainerFilter{})
	if err != nil {
		return out, fmt.Errorf("ListContainers: %w", err)
	}
	for _, c := range cs {
		ct := observe.CRIContainer{ID: c.Id, Name: c.Metadata.Name, Pod: names[c.PodSandboxId], SandboxID: c.PodSandboxId, Image: c.Image.Image, State: c.State.String()}
		st, err := statusOf(ctx, func() (*runtimeapi.ContainerStatusResponse, error) { return rs.ContainerStatus(ctx, c.Id, true) })
		if err != nil {
			ct.Error = "ContainerStatus: " + err.Error()
		} else {
			ct.PID = verbosePID(st.Info)
		}
		ct.NetNS = netns(ct.PID)
		out.Containers = append(out.Containers, ct)
	}
	return out, nil
}

// callTimeout bounds each CRI call. The kubelet gives its runtime calls 2
// minutes; a node of a loaded machine (two docker clusters on 2 cores)
// has answered a verbose status in more than the 5 s this once allowed.
const callTimeout = 10 * time.Second

// statusOf makes a status call, and makes it again (up to 3 times in
// all) when it fails: a sandbox or container being set up or torn down
// can fail one call and answer the next. The last error is what the
// output reports, so a status the runtime would not give reads as that
// error, never as a silent pid 0 with no namespace.
func statusOf[T any](ctx context.Context, call func() (T, error)) (T, error) {
	var (
		v   T
		err error
	)
	for attempt := range 3 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return v, fmt.Errorf("%w (after %d attempts)", err, attempt)
			case <-time.After(200 * time.Millisecond):
			}
		}
		if v, err = call(); err == nil {
			return v, nil
		}
	}
	return v, fmt.Errorf("%w (after 3 attempts)", err)
}

// verbosePID reads the process ID from containerd's verbose status info.
func verbosePID(info map[string]string) int {
	var v struct {
		PID int `json:"pid"`
	}
	_ = json.Unmarshal([]byte(info["info"]), &v)
	return v.PID
}

func verboseImage(info map[string]string) string {
	var v struct {
		Image string `json:"image"`
	}
	_ = json.Unmarshal([]byte(info["info"]), &v)
	return v.Image
}

// netns is the network namespace a process is in ("net:[4026532...]").
func netns(pid int) string {
	if pid <= 0 {
		return ""
	}
	s, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net")
	return s
}
