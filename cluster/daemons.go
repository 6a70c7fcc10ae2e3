package cluster

import (
	"slices"
	"strings"
)

// Daemons that run inside every real node. A fault target NODE/DAEMON
// (worker-2/kubelet) names one of them inside one node: backends with real
// nodes act on that process alone and leave the node and its pods running.
const (
	DaemonContainerd = "containerd"
	DaemonKubelet    = "kubelet"
	DaemonKubeProxy  = "kube-proxy"
)

// NodeDaemons lists the daemons a NODE/DAEMON target may name.
var NodeDaemons = []string{DaemonContainerd, DaemonKubelet, DaemonKubeProxy}

// SplitNodeDaemon splits a target inside a node, "worker-2/kubelet", into
// its node and daemon; ok is false for any name without a "/". The parts
// are not checked: see KnownDaemon.
func SplitNodeDaemon(target string) (node, daemon string, ok bool) {
	return strings.Cut(target, "/")
}

// KnownDaemon reports whether daemon is one of NodeDaemons.
func KnownDaemon(daemon string) bool { return slices.Contains(NodeDaemons, daemon) }
