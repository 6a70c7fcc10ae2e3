// Package controlplane is the one plan of a kubelab control plane: the
// arguments of etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, the certificates and identities they use, and the RBAC
// that kubelab's own in-cluster identities get. Every backend renders the
// same plan; a backend only says where things are (a Site: addresses,
// ports, and the paths files have as the component sees them) and places
// the components (a process, a container).
//
// It starts nothing and knows nothing about labs.
package controlplane

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"kubelab.dev/kubelab/cluster"
)

// Networks of every kubelab cluster.
const (
	ServiceCIDR = "10.96.0.0/16"
	// PodCIDR holds one /24 per node, 4,096 in all.
	PodCIDR = "10.240.0.0/12"
	// KubernetesServiceIP is the first address of ServiceCIDR, the
	// "kubernetes" Service in default.
	KubernetesServiceIP = "10.96.0.1"
	// DNSServiceIP is the kube-dns Service's address (the kubelets' clusterDNS).
	DNSServiceIP = "10.96.0.10"
	// ServiceAccountIssuer is the issuer of service-account tokens.
	ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
)

// Component is one control-plane process to place.
type Component struct {
	// Name is unique in the cluster: etcd-1, kube-apiserver-2...
	Name string
	// Role says which upstream component it is.
	Role cluster.Role
	// Args are the component's own arguments (after its name).
	Args []string
}

// EtcdURLs is where one etcd member listens and how others reach it.
type EtcdURLs struct {
	ListenClient, AdvertiseClient string
	// ListenClientHTTP, when set, serves the member's HTTP endpoints
	// (/health, /metrics, /version) apart: ListenClient then serves gRPC
	// alone, through grpc-go's own server instead of as a handler of
	// net/http's HTTP/2 server, which is what etcd does for a TLS port
	// shared by both (see etcd's --listen-client-http-urls).
	ListenClientHTTP          string
	ListenPeer, AdvertisePeer string
	// DataDir as the member sees it.
	DataDir string
}

// Serving is where a component serves HTTPS.
type Serving struct {
	// Bind is the address it listens on.
	Bind string
	// Port is its secure port.
	Port int
	// Advertise is the address it tells others (apiservers only). An
	// argument may be a placeholder the component runner fills in, such as
	// "@HOST_IP@".
	Advertise string
}

// Site is what a backend says about where the components are.
type Site struct {
	// Path maps a file of the plan (see the File constants) to its path as
	// components see it.
	Path func(file string) string
	// Etcd gives a member's URLs.
	Etcd func(member string) EtcdURLs
	// APIServer gives an apiserver's serving endpoint.
	APIServer func(name string) Serving
	// Serving gives a controller-manager's or scheduler's serving endpoint.
	Serving func(name string) Serving
	// Server is the URL components reach the apiservers at (the load
	// balancer).
	Server string
	// AuditLog is where an apiserver writes its audit log (JSON lines), as
	// it sees the path; nil: no audit log.
	AuditLog func(apiserver string) string
	// SchedulingLog is where a scheduler's recording wrappers write its
	// decisions, as it sees the path; nil: not recorded.
	SchedulingLog func(scheduler string) string
	// AllocateNodeCIDRs makes the controller-manager assign each node a pod
	// range (real nodes' CNI needs it; simulated nodes get theirs from
	// kubelab).
	AllocateNodeCIDRs bool
}

// Names of the members of each role, in order.
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i+1)
	}
	return out
}

// EtcdMembers names the etcd members of t.
func EtcdMembers(t cluster.Topology) []string { return names("etcd", t.Etcd) }

// APIServers names the apiservers of t.
func APIServers(t cluster.Topology) []string { return names("kube-apiserver", t.APIServers) }

// ControllerManagers names the controller-managers of t.
func ControllerManagers(t cluster.Topology) []string {
	return names("kube-controller-manager", t.ControllerManagers)
}

// Schedulers names the schedulers of t.
func Schedulers(t cluster.Topology) []string { return names("kube-scheduler", t.Schedulers) }

// Components renders every control-plane component of a defaulted
// topology for a site, in boot order: etcd, apiservers,
// controller-managers, schedulers.
func Components(t cluster.Topology, s Site) []Component {
	var out []Component
	out = append(out, etcd(t, s)...)
	for _, n := range APIServers(t) {
		out = append(out, Component{Name: n, Role: cluster.RoleAPIServer, Args: apiserver(t, s, n)})
	}
	for _, n := range ControllerManagers(t) {
		out = append(out, Component{Name: n, Role: cluster.RoleControllerManager, Args: controllerManager(t, s, n)})
	}
	for _, n := range Schedulers(t) {
		out = append(out, Component{Name: n, Role: cluster.RoleScheduler, Args: scheduler(t, s, n)})
	}
	return out
}

// EtcdToken is the initial-cluster-token the members of t bootstrap with.
func EtcdToken(t cluster.Topology) string { return "kubelab-" + t.Name }

// initialCluster is etcd's --initial-cluster: every member's name and peer
// URL.
func initialCluster(t cluster.Topology, s Site) string {
	members := EtcdMembers(t)
	initial := make([]string, len(members))
	for i, m := range members {
		initial[i] = m + "=" + s.Etcd(m).AdvertisePeer
	}
	return strings.Join(initial, ",")
}

// EtcdRevisionBump is how far a restore moves etcd's revision forward:
// past any resourceVersion a client saw before the restore (the value
// etcd's and Kubernetes' restore guides use).
const EtcdRevisionBump = 1_000_000_000

// EtcdRestoreArgs are the arguments of `etcdutl snapshot restore` that
// turn snapshot into a fresh data directory (dataDir, as the restoring
// process sees it) for member of t: its name and peer URL, the whole
// initial cluster, and token, the initial-cluster-token of the new
// cluster (a new token gives new member and cluster IDs, so a member left
// with old data cannot rejoin). The revision is bumped and marked
// compacted, so watchers that resume from a revision of the old timeline
// get "compacted" and relist instead of waiting for revisions that now
// mean something else.
func EtcdRestoreArgs(t cluster.Topology, s Site, member, snapshot, dataDir, token string) []string {
	return []string{"snapshot", "restore", snapshot,
		"--name=" + member, "--data-dir=" + dataDir,
		"--initial-cluster=" + initialCluster(t, s), "--initial-cluster-token=" + token,
		"--initial-advertise-peer-urls=" + s.Etcd(member).AdvertisePeer,
		"--bump-revision=" + strconv.Itoa(EtcdRevisionBump), "--mark-compacted",
	}
}

// EtcdSeedArgs are the arguments of `etcdutl snapshot restore` that turn
// a seed (a snapshot of a freshly bootstrapped control plane, see
// cluster/seed) into member's data directory (dataDir, as the restoring
// process sees it) before the member first starts: the member, the whole
// initial cluster and the cluster's own token, so each cluster gets its
// own cluster and member IDs. Unlike a restore over a running cluster, no
// client has seen a revision yet: none is bumped.
func EtcdSeedArgs(t cluster.Topology, s Site, member, snapshot, dataDir string) []string {
	return []string{"snapshot", "restore", snapshot,
		"--name=" + member, "--data-dir=" + dataDir,
		"--initial-cluster=" + initialCluster(t, s), "--initial-cluster-token=" + EtcdToken(t),
		"--initial-advertise-peer-urls=" + s.Etcd(member).AdvertisePeer,
	}
}

// loneMemberTimings are the Raft timings of an etcd that is a cluster of
// one. Such a member has no peer to hear from or lose: its election
// timeout only delays its own first election after every start (by up
// to the whole timeout: etcd's fast-forward leaves a random 1 to 10
// ticks), 1 s with upstream's 100 ms heartbeat and 1 s timeout, which
// every single-etcd boot and etcd restart waited. A 10 ms tick makes
// that wait 10 to 100 ms. Clusters of 3 and 5 keep upstream's timings:
// their labs are about elections.
var loneMemberTimings = []string{"--heartbeat-interval=10", "--election-timeout=100"}

func etcd(t cluster.Topology, s Site) []Component {
	members := EtcdMembers(t)
	out := make([]Component, len(members))
	for i, m := range members {
		u := s.Etcd(m)
		out[i] = Component{Name: m, Role: cluster.RoleEtcd, Args: []string{
			"--name=" + m,
			"--data-dir=" + u.DataDir,
			"--listen-client-urls=" + u.ListenClient, "--advertise-client-urls=" + u.AdvertiseClient,
			"--listen-peer-urls=" + u.ListenPeer, "--initial-advertise-peer-urls=" + u.AdvertisePeer,
			"--initial-cluster=" + initialCluster(t, s),
			"--initial-cluster-state=new", "--initial-cluster-token=" + EtcdToken(t),
			"--client-cert-auth", "--trusted-ca-file=" + s.Path(EtcdCA),
			"--cert-file=" + s.Path(m+".crt"), "--key-file=" + s.Path(m+".key"),
			"--peer-client-cert-auth", "--peer-trusted-ca-file=" + s.Path(EtcdCA),
			"--peer-cert-file=" + s.Path(m+".crt"), "--peer-key-file=" + s.Path(m+".key"),
			"--snapshot-count=10000", "--log-level=info",
		}}
		if u.ListenClientHTTP != "" {
			out[i].Args = append(out[i].Args, "--listen-client-http-urls="+u.ListenClientHTTP)
		}
		if len(members) == 1 {
			out[i].Args = append(out[i].Args, loneMemberTimings...)
		}
	}
	return out
}

func apiserver(t cluster.Topology, s Site, name string) []string {
	var servers []string
	for _, m := range EtcdMembers(t) {
		servers = append(servers, s.Etcd(m).AdvertiseClient)
	}
	if t.Stacked {
		// kubeadm's stacked etcd: an apiserver talks to the member on its
		// own control-plane node only (https://127.0.0.1:2379 there), so
		// it serves only while that member is in the quorum.
		i, _ := strconv.Atoi(name[strings.LastIndex(name, "-")+1:])
		servers = servers[i-1 : i]
	}
	sv := s.APIServer(name)
	args := []string{
		"--bind-address=" + sv.Bind, "--secure-port=" + strconv.Itoa(sv.Port), "--advertise-address=" + sv.Advertise,
	}
	if isLoopback(sv.Advertise) {
		// The default endpoint reconciler refuses a loopback address for
		// the kubernetes Service's endpoints.
		args = append(args, "--endpoint-reconciler-type=none")
	}
	args = append(args,
		"--etcd-servers="+strings.Join(servers, ","),
		"--etcd-cafile="+s.Path(EtcdCA), "--etcd-certfile="+s.Path(EtcdClientCert), "--etcd-keyfile="+s.Path(EtcdClientKey),
		"--tls-cert-file="+s.Path(APIServerCert), "--tls-private-key-file="+s.Path(APIServerKey),
		"--client-ca-file="+s.Path(CA),
		"--kubelet-client-certificate="+s.Path(KubeletClientCert), "--kubelet-client-key="+s.Path(KubeletClientKey),
		"--service-account-issuer="+ServiceAccountIssuer,
		"--service-account-key-file="+s.Path(SAPublic), "--service-account-signing-key-file="+s.Path(SAKey),
		"--service-cluster-ip-range="+ServiceCIDR,
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true", "--profiling=false",
		// The front proxy: the aggregation layer authenticates to extension
		// apiservers with this client certificate, and they trust the
		// request headers it sets.
		"--requestheader-client-ca-file="+s.Path(FrontProxyCA), "--requestheader-allowed-names="+frontProxyClientCN,
		"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file="+s.Path(FrontProxyClientCert), "--proxy-client-key-file="+s.Path(FrontProxyClientKey),
		// To an APIService's or a webhook's Service, dial an endpoint, not
		// the ClusterIP: the apiservers run no kube-proxy.
		"--enable-aggregator-routing=true",
		// On SIGTERM, end the open watches (clients reconnect elsewhere)
		// rather than wait for them: without it, stop and restart of an
		// apiserver waited out their 20 s timeout on both backends, as
		// its HTTP server's graceful shutdown waited for watch streams
		// that never end.
		"--shutdown-watch-termination-grace-period=2s",
	)
	if t.Audited() {
		args = append(args, auditFlags(s, name)...)
	}
	return append(args, t.Timings.APIServerFlags()...)
}

// EnvWaitForAPIServer names a kubeconfig: a component started with it in
// its environment waits until the apiserver that kubeconfig reaches
// answers /readyz before its upstream main runs. Containers take a second
// or more to start, so the docker backend starts the controller-managers
// and schedulers with etcd and the apiservers, gated by this, rather than
// after them; the upstream programs then start as they always do,
// against a ready apiserver.
const EnvWaitForAPIServer = "KUBELAB_WAIT_FOR_APISERVER"

// EnvServingCA names the cluster CA's files without their extension
// (ca.crt, ca.key): an apiserver started with it in its environment
// first re-issues its serving certificate with the same names plus its
// own address, known only once it runs in its container. That address
// is the one it advertises (the kubernetes Endpoints, the service
// account issuer's jwks_uri), so clients that reach it there can verify
// it.
const EnvServingCA = "KUBELAB_SERVING_CA"

// EnvWaitReadyz is the path the gate of EnvWaitForAPIServer asks
// (default /readyz): a cluster restored from a seed gates on every check
// but the bootstrap hooks whose objects the seed holds.
const EnvWaitReadyz = "KUBELAB_WAIT_READYZ"

func controllerManager(t cluster.Topology, s Site, name string) []string {
	kc := s.Path(ControllerManager.Kubeconfig())
	sv := s.Serving(name)
	args := []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=" + sv.Bind, "--secure-port=" + strconv.Itoa(sv.Port),
		"--tls-cert-file=" + s.Path(ServingCert(name)), "--tls-private-key-file=" + s.Path(ServingKey(name)),
		"--use-service-account-credentials=true",
		// Upstream 20 QPS makes the controller-manager spend ~5 s minting
		// per-controller credentials at start and caps a Deployment at 20
		// pods/s. The node lifecycle controller lifts the not-ready taint
		// of each new node with a GET and a PATCH: at 200 QPS 1,000 nodes
		// were usable 12.2 s after the control plane, at 1,000 QPS 8.7-9.9 s
		// (the cluster then runs out of CPU, not of its client's budget).
		"--kube-api-qps=1000", "--kube-api-burst=2000",
		"--service-account-private-key-file=" + s.Path(SAKey), "--root-ca-file=" + s.Path(CA),
		"--cluster-signing-cert-file=" + s.Path(CA), "--cluster-signing-key-file=" + s.Path(CAKey),
		"--service-cluster-ip-range=" + ServiceCIDR, "--cluster-cidr=" + PodCIDR,
		"--allocate-node-cidrs=" + strconv.FormatBool(s.AllocateNodeCIDRs),
	}
	if s.AllocateNodeCIDRs {
		args = append(args, "--node-cidr-mask-size=24")
	}
	return append(args, t.Timings.ControllerManagerFlags()...)
}

func scheduler(t cluster.Topology, s Site, name string) []string {
	kc := s.Path(Scheduler.Kubeconfig())
	sv := s.Serving(name)
	var args []string
	if s.SchedulingLog != nil && t.Scheduler.Recorded() {
		args = append(args, SchedulingLogFlag+"="+s.SchedulingLog(name))
	}
	if e := t.Scheduler.Extender; e != nil {
		b, _ := json.Marshal(e) // strings and an int
		args = append(args, ExtenderFlag+"="+string(b))
	}
	// The client connection (kubeconfig, QPS) is in the config file: with
	// --config, upstream ignores the deprecated --kubeconfig and
	// --kube-api-qps flags.
	args = append(args, "--config="+s.Path(SchedulerConfig),
		"--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--bind-address="+sv.Bind, "--secure-port="+strconv.Itoa(sv.Port),
		"--tls-cert-file="+s.Path(ServingCert(name)), "--tls-private-key-file="+s.Path(ServingKey(name)))
	return append(args, t.Timings.LeaderElectionFlags()...)
}

func isLoopback(addr string) bool {
	ip := net.ParseIP(addr)
	return ip != nil && ip.IsLoopback()
}

// Render writes components one argument a line, for people and golden
// files.
func Render(comps []Component) string {
	var s strings.Builder
	for _, c := range comps {
		fmt.Fprintf(&s, "%s (%s)\n", c.Name, c.Role)
		for _, a := range c.Args {
			fmt.Fprintf(&s, "  %s\n", a)
		}
	}
	return s.String()
}
