package observe

import (
	"regexp"
	"sort"
	"strings"
)

// CRI is what a node's container runtime reports over the CRI: the pod
// sandboxes (each held by a pause process) and the containers.
type CRI struct {
	Sandboxes  []Sandbox      `json:"sandboxes" expr:"sandboxes"`
	Containers []CRIContainer `json:"containers" expr:"containers"`
}

// Sandbox is one pod sandbox.
type Sandbox struct {
	ID        string `json:"id" expr:"id"`
	Pod       string `json:"pod" expr:"pod"`
	Namespace string `json:"namespace" expr:"namespace"`
	// State: SANDBOX_READY or SANDBOX_NOTREADY.
	State string `json:"state" expr:"state"`
	// Image of the sandbox's process (the pause image).
	Image          string `json:"image,omitempty" expr:"image"`
	RuntimeHandler string `json:"runtimeHandler,omitempty" expr:"runtimeHandler"`
	// IP is the pod's address, set up in the sandbox's network namespace.
	IP string `json:"ip,omitempty" expr:"ip"`
	// PID of the pause process and its network namespace.
	PID   int    `json:"pid" expr:"pid"`
	NetNS string `json:"netns" expr:"netns"`
	// Error is why the runtime gave no status for the sandbox (then PID,
	// Image, IP and NetNS are empty); "" when it did.
	Error string `json:"error,omitempty" expr:"error"`
}

// CRIContainer is one container.
type CRIContainer struct {
	ID        string `json:"id" expr:"id"`
	Name      string `json:"name" expr:"name"`
	Pod       string `json:"pod" expr:"pod"`
	SandboxID string `json:"sandboxId" expr:"sandboxId"`
	Image     string `json:"image" expr:"image"`
	// State: CONTAINER_CREATED, CONTAINER_RUNNING, CONTAINER_EXITED.
	State string `json:"state" expr:"state"`
	PID   int    `json:"pid" expr:"pid"`
	NetNS string `json:"netns" expr:"netns"`
	// Error is why the runtime gave no status for the container (then PID
	// and NetNS are empty); "" when it did.
	Error string `json:"error,omitempty" expr:"error"`
}

// IPTables is a node's nat table as kube-proxy wrote it.
type IPTables struct {
	// Chains maps each chain to its rules (iptables-save lines after -A CHAIN).
	Chains map[string][]string `json:"chains" expr:"chains"`
	// Services maps "namespace/name:port" (port name, may be empty) to how
	// kube-proxy serves it.
	Services map[string]ProxiedService `json:"services" expr:"services"`
}

// ProxiedService is one Service port in a node's nat table: KUBE-SERVICES
// jumps to its KUBE-SVC chain, which picks one KUBE-SEP chain per ready
// endpoint (by probability), each DNATing to the endpoint.
type ProxiedService struct {
	// Chain is the service's KUBE-SVC-... chain.
	Chain string `json:"chain" expr:"chain"`
	// ClusterIP the KUBE-SERVICES rule matches.
	ClusterIP string `json:"clusterIP" expr:"clusterIP"`
	// Endpoints are the KUBE-SEP chains' DNAT targets (ip:port).
	Endpoints []string `json:"endpoints" expr:"endpoints"`
	// SEPs are the KUBE-SEP-... chains.
	SEPs []string `json:"seps" expr:"seps"`
	// NodePort is true when KUBE-NODEPORTS jumps to the service chain too.
	NodePort bool `json:"nodePort" expr:"nodePort"`
}

var (
	ruleRE    = regexp.MustCompile(`^-A (\S+) (.*)$`)
	commentRE = regexp.MustCompile(`--comment "?([^" ]+)`)
	jumpRE    = regexp.MustCompile(`-j (\S+)`)
	dstRE     = regexp.MustCompile(`-d (\d+\.\d+\.\d+\.\d+)/32`)
	dnatRE    = regexp.MustCompile(`--to-destination (\S+)`)
)

// ParseIPTables reads `iptables-save -t nat` output.
func ParseIPTables(save string) IPTables {
	t := IPTables{Chains: map[string][]string{}, Services: map[string]ProxiedService{}}
	for _, line := range strings.Split(save, "\n") {
		if m := ruleRE.FindStringSubmatch(line); m != nil {
			t.Chains[m[1]] = append(t.Chains[m[1]], m[2])
		}
	}
	svcOf := map[string]string{} // KUBE-SVC chain -> service key
	for _, r := range t.Chains["KUBE-SERVICES"] {
		j, c := jumpRE.FindStringSubmatch(r), commentRE.FindStringSubmatch(r)
		if j == nil || c == nil || !strings.HasPrefix(j[1], "KUBE-SVC-") {
			continue
		}
		s := t.Services[c[1]]
		s.Chain = j[1]
		if d := dstRE.FindStringSubmatch(r); d != nil {
			s.ClusterIP = d[1]
		}
		t.Services[c[1]] = s
		svcOf[j[1]] = c[1]
	}
	// KUBE-NODEPORTS jumps to the service's KUBE-EXT chain (external
	// traffic policy), which jumps to its KUBE-SVC chain.
	for _, r := range t.Chains["KUBE-NODEPORTS"] {
		j := jumpRE.FindStringSubmatch(r)
		if j == nil {
			continue
		}
		targets := []string{j[1]}
		for _, er := range t.Chains[j[1]] {
			if ej := jumpRE.FindStringSubmatch(er); ej != nil {
				targets = append(targets, ej[1])
			}
		}
		for _, target := range targets {
			if key, ok := svcOf[target]; ok {
				s := t.Services[key]
				s.NodePort = true
				t.Services[key] = s
			}
		}
	}
	for chain, key := range svcOf {
		s := t.Services[key]
		for _, r := range t.Chains[chain] {
			j := jumpRE.FindStringSubmatch(r)
			if j == nil || !strings.HasPrefix(j[1], "KUBE-SEP-") {
				continue
			}
			s.SEPs = append(s.SEPs, j[1])
			for _, sr := range t.Chains[j[1]] {
				if d := dnatRE.FindStringSubmatch(sr); d != nil {
					s.Endpoints = append(s.Endpoints, d[1])
				}
			}
		}
		sort.Strings(s.Endpoints)
		t.Services[key] = s
	}
	return t
}
