package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/ops"
	"kubelab.dev/kubelab/report"
)

// Machinery is what the page draws of the cluster's machinery, sent with
// each evaluation: who leads etcd and holds each lease, the timeline as
// the HTML report draws it, the latest refused requests with the stage of
// the request pipeline that stopped them, and the faults the page can
// cause. What the backend cannot show says so (Notes) instead of staying
// empty.
type Machinery struct {
	Raft     *assertions.Raft  `json:"raft,omitempty"`
	Leaders  map[string]string `json:"leaders,omitempty"`
	Timeline string            `json:"timeline"`
	Refused  []Refusal         `json:"refused"`
	Faults   []Fault           `json:"faults"`
	// Scheduling are the scheduler's latest decisions, newest first, each
	// drawn as the HTML report draws it (report.SchedulingHTML).
	Scheduling []string `json:"scheduling"`
	// Traces are the apply traces of the Deployments created so far, in
	// the order they were created, each drawn as the HTML report draws it
	// (report.TraceHTML); the page shows the one chosen.
	Traces []TraceView `json:"traces"`
	// Nodes are what each real node shows inside (docker backend): its
	// pod sandboxes (the pause process holding each pod's network
	// namespace) and containers from the CRI, and how kube-proxy's nat
	// chains send each Service to its endpoints.
	Nodes []NodeInside `json:"nodes"`
	// Metrics are the control plane's own metrics that its alerts watch,
	// each with the metric() expression that reads it in a lab.
	Metrics []MetricRow `json:"metrics"`
	// Notes say, by panel (raft, pipeline, faults, scheduling, metrics),
	// why it is empty.
	Notes map[string]string `json:"notes,omitempty"`
}

// MetricRow is one metric of a component now.
type MetricRow struct {
	Component string `json:"component"`
	// Expr is the metric() expression that reads it, for labs.
	Expr string `json:"expr"`
	// Value is its value now, or why it could not be read.
	Value string `json:"value"`
	// Means says what it tells an operator.
	Means string `json:"means"`
}

// Refusal is a request the apiservers refused, with the pipeline stage
// that stopped it.
type Refusal = engine.PipelineRequest

// NodeInside is one node's CRI and kube-proxy state.
type NodeInside struct {
	Name     string              `json:"name"`
	CRI      assertions.CRI      `json:"cri"`
	IPTables assertions.IPTables `json:"iptables"`
	Error    string              `json:"error,omitempty"`
}

// TraceView is one Deployment's apply trace, drawn.
type TraceView struct {
	Deployment string `json:"deployment"`
	HTML       string `json:"html"`
}

// Fault is a fault or repair the page offers: an operation kind of lab
// files and its target, run as a lab would run it.
type Fault struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Label  string `json:"label"`
	// Idle says why the fault would change nothing now (a start of a
	// component that runs, a node taken down that is down): the page
	// shows the button disabled with this as its title.
	Idle string `json:"idle,omitempty"`
	// members are the components a stacked control-plane node's fault
	// hits, to tell whether it is up or down.
	members []string
}

// markIdle marks the faults that would change nothing in the cluster as
// it is: a start of a running component, a node brought up that is up
// or taken down that is down.
func markIdle(p *i18n.Printer, fs []Fault, comps []cluster.Component) {
	state := map[string]cluster.State{}
	for _, c := range comps {
		state[c.Name] = c.State
	}
	for i, f := range fs {
		st, known := state[f.Target]
		if len(f.members) > 0 {
			// A control-plane node is up while all of it runs, down while
			// none of it does.
			running := 0
			for _, m := range f.members {
				if state[m] == cluster.StateRunning {
					running++
				}
			}
			switch {
			case f.Kind == "start" && running == len(f.members):
				fs[i].Idle = p.Sprintf("%s is running", f.Target)
			case f.Kind == "kill" && running == 0:
				fs[i].Idle = p.Sprintf("%s is down", f.Target)
			}
			continue
		}
		switch {
		case !known:
		case (f.Kind == "start" || f.Kind == "nodeUp") && st == cluster.StateRunning:
			fs[i].Idle = p.Sprintf("%s is running", f.Target)
		case f.Kind == "nodeDown" && st != cluster.StateRunning:
			fs[i].Idle = p.Sprintf("%s is down", f.Target)
		}
	}
}

// faults are what the page offers for the topology and capabilities.
func faults(p *i18n.Printer, t cluster.Topology, caps map[cluster.Capability]bool) []Fault {
	if !caps[cluster.CapComponentFaults] {
		return nil
	}
	var out []Fault
	if t.Etcd >= 3 && caps[cluster.CapEtcdRaft] {
		out = append(out, Fault{Kind: "kill", Target: "etcd-leader", Label: p.S("kill the etcd leader")})
	}
	if t.Schedulers >= 1 {
		out = append(out, Fault{Kind: "kill", Target: "scheduler-leader", Label: p.S("kill the scheduler leader")})
	}
	if t.ControllerManagers >= 1 {
		out = append(out, Fault{Kind: "kill", Target: "controller-manager-leader", Label: p.S("kill the controller-manager leader")})
	}
	if caps[cluster.CapNodeDown] {
		for _, n := range t.Nodes {
			out = append(out, Fault{Kind: "nodeDown", Target: n.Name, Label: p.Sprintf("take %s down", n.Name)}, Fault{Kind: "nodeUp", Target: n.Name, Label: p.Sprintf("bring %s up", n.Name)})
		}
	}
	// A stacked topology's control-plane nodes fail and return whole.
	nodes := t.ControlPlaneNodes()
	for _, n := range slices.Sorted(maps.Keys(nodes)) {
		out = append(out, Fault{Kind: "kill", Target: n, Label: p.Sprintf("take %s down", n), members: nodes[n]},
			Fault{Kind: "start", Target: n, Label: p.Sprintf("bring %s up", n), members: nodes[n]})
	}
	// Every component that can be stopped can be started again.
	for _, names := range [][]string{controlplane.EtcdMembers(t), controlplane.Schedulers(t), controlplane.ControllerManagers(t)} {
		for _, c := range names {
			out = append(out, Fault{Kind: "start", Target: c, Label: p.Sprintf("start %s", c)})
		}
	}
	return out
}

// recentDecisions is how many of the scheduler's latest decisions the
// page draws.
const recentDecisions = 3

// machinery reads the cluster's machinery now.
func (s *Server) machinery() Machinery {
	sess, p := s.session(), s.o.Words
	caps := cluster.CapabilitiesOf(sess.Cluster().Backend)
	m := Machinery{Notes: map[string]string{}, Leaders: map[string]string{}, Refused: []Refusal{}, Scheduling: []string{}, Traces: []TraceView{}, Nodes: []NodeInside{}}
	if caps[cluster.CapEtcdRaft] {
		if v, err := sess.Eval("raft"); err == nil {
			if r, ok := v.(assertions.Raft); ok {
				m.Raft = &r
			}
		}
	} else {
		m.Notes["raft"] = p.S("this backend cannot read etcd's Raft state (an existing cluster's etcd is not kubelab's)")
	}
	for _, l := range []string{"kube-scheduler", "kube-controller-manager"} {
		if v, err := sess.Eval(fmt.Sprintf("leader(%q)", l)); err == nil {
			if h, _ := v.(string); h != "" {
				m.Leaders[l] = h
			}
		}
	}
	lab := &report.Lab{Now: sess.Elapsed(), Timeline: sess.Timeline(), Recovery: sess.Recovery()}
	if svg, err := report.TimelineSVG(lab); err == nil {
		m.Timeline = string(svg)
	}
	if caps[cluster.CapAuditLog] {
		m.Refused = append(m.Refused, sess.Refused(context.Background())...)
		if len(m.Refused) > 10 {
			m.Refused = m.Refused[len(m.Refused)-10:]
		}
		for _, t := range sess.Traces(context.Background()) {
			if h, err := report.TraceHTML(t, p); err == nil {
				m.Traces = append(m.Traces, TraceView{Deployment: t.Deployment, HTML: string(h)})
			}
		}
	} else {
		m.Notes["traces"] = p.S("the apiservers' audit log is not read on this cluster, so no apply trace can be drawn")
		m.Notes["pipeline"] = p.S("the apiservers' audit log is not read on this cluster, so the request pipeline cannot be drawn")
	}
	if caps[cluster.CapSchedulingLog] {
		for _, d := range sess.RecentScheduling(recentDecisions) {
			if h, err := report.SchedulingHTML(d, p); err == nil {
				m.Scheduling = append(m.Scheduling, string(h))
			}
		}
	} else {
		m.Notes["scheduling"] = p.S("the schedulers of this cluster do not record their decisions, so the scheduler's panel cannot be drawn")
	}
	if caps[cluster.CapNodeInternals] {
		m.Nodes = nodesInside(sess)
	} else {
		m.Notes["nodes"] = p.S("this cluster's nodes are simulated (kwok): no containers, no sandboxes, no iptables to show; the docker backend has real ones")
	}
	if caps[cluster.CapComponentMetrics] {
		m.Metrics = s.metrics.rows(sess, func() []MetricRow { return metricRows(sess, p, m.Leaders) })
	} else {
		m.Notes["metrics"] = p.S("this backend cannot read the components' own /metrics (an existing cluster's control plane is not kubelab's)")
	}
	m.Faults = faults(p, sess.Topology(), caps)
	if len(m.Faults) == 0 {
		m.Notes["faults"] = p.S("this backend cannot hurt its cluster's components (an existing cluster is not kubelab's to hurt)")
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if comps, err := sess.Cluster().Components(ctx); err == nil {
			markIdle(p, m.Faults, comps)
		}
		cancel()
	}
	return m
}

// metricsReuse is how long a read of the components' /metrics is shown
// again instead of read anew: a busy cluster is evaluated several times a
// second, and an apiserver's metrics are megabytes of text to fetch and
// parse each time.
const metricsReuse = 2 * time.Second

// metricsCache keeps the last metrics rows of a session.
type metricsCache struct {
	mu   sync.Mutex
	sess *engine.Session
	at   time.Time
	last []MetricRow
}

// rows are the cached rows of sess, or read's when they are older than
// metricsReuse or of another session (after a reset).
func (c *metricsCache) rows(sess *engine.Session, read func() []MetricRow) []MetricRow {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess != sess || time.Since(c.at) >= metricsReuse {
		c.sess, c.at, c.last = sess, time.Now(), read()
	}
	return c.last
}

// watched is a metric the panel shows: the expression's name and labels,
// and what it means.
type watched struct {
	name   string
	labels map[string]any
	means  string
}

// value is w's value in the metrics of component, or why they could not
// be read.
func (w watched) value(fams assertions.MetricFamilies, readErr error, component string) (float64, error) {
	if readErr != nil {
		return 0, readErr
	}
	return fams.Value(component, w.name, w.labels)
}

// readMetrics reads and parses a component's metrics once, for all of its
// rows: an apiserver's are megabytes of text.
func readMetrics(ctx context.Context, sess *engine.Session, component string) (assertions.MetricFamilies, error) {
	text, err := sess.Metrics(ctx, component)
	if err != nil {
		return nil, err
	}
	return assertions.ParseMetrics(text, component)
}

// metricRows reads each component's /metrics once and picks the metrics
// an operator's alerts watch (the course's best practices): etcd's leader
// and WAL fsyncs, the apiservers' requests and errors, the leading
// scheduler's queues, the leading controller-manager's work queues.
func metricRows(sess *engine.Session, p *i18n.Printer, leaders map[string]string) []MetricRow {
	t := sess.Topology()
	type comp struct {
		name string
		ws   []watched
	}
	var comps []comp
	for _, e := range controlplane.EtcdMembers(t) {
		comps = append(comps, comp{e, []watched{
			{"etcd_server_is_leader", nil, p.S("1 on the Raft leader")},
			{"etcd_server_leader_changes_seen_total", nil, p.S("leader changes this member saw: frequent ones mean a slow disk or network")},
			{"etcd_disk_wal_fsync_duration_seconds_count", nil, p.S("write-ahead log fsyncs: every write waits for one")},
		}})
	}
	for _, a := range controlplane.APIServers(t) {
		comps = append(comps, comp{a, []watched{
			{"apiserver_request_total", nil, p.S("requests answered, by verb, resource and code")},
			{"apiserver_request_total", map[string]any{"code": "422"}, p.S("requests validation refused (a request authorization refuses is not counted)")},
		}})
	}
	if s := leaders["kube-scheduler"]; s != "" {
		comps = append(comps, comp{s, []watched{
			{"scheduler_pending_pods", map[string]any{"queue": "unschedulable"}, p.S("pods no node fits, waiting for the cluster to change")},
			{"scheduler_schedule_attempts_total", map[string]any{"result": "scheduled"}, p.S("pods placed")},
		}})
	}
	if c := leaders["kube-controller-manager"]; c != "" {
		comps = append(comps, comp{c, []watched{
			{"workqueue_depth", nil, p.S("items waiting in its controllers' work queues")},
		}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []MetricRow
	for _, c := range comps {
		fams, readErr := readMetrics(ctx, sess, c.name)
		for _, w := range c.ws {
			r := MetricRow{Component: c.name, Expr: metricExpr(c.name, w), Means: w.means}
			if v, err := w.value(fams, readErr, c.name); err != nil {
				r.Value = p.Sprintf("unread: %v", err)
			} else {
				r.Value = assertions.Format(v)
			}
			out = append(out, r)
		}
	}
	return out
}

// metricExpr is the metric() expression that reads w of component.
func metricExpr(component string, w watched) string {
	e := fmt.Sprintf("metric(%q, %q", component, w.name)
	if len(w.labels) > 0 {
		e += ", " + assertions.Literal(w.labels)
	}
	return e + ")"
}

// nodesInside reads each worker's CRI and nat table, as cri() and
// iptables() read them in a lab.
func nodesInside(sess *engine.Session) []NodeInside {
	var out []NodeInside
	for _, n := range sess.Topology().Nodes {
		in := NodeInside{Name: n.Name}
		var errs []string
		if v, err := sess.Eval(fmt.Sprintf("cri(%q)", n.Name)); err != nil {
			errs = append(errs, err.Error())
		} else if c, ok := v.(assertions.CRI); ok {
			in.CRI = c
		}
		if v, err := sess.Eval(fmt.Sprintf("iptables(%q)", n.Name)); err != nil {
			errs = append(errs, err.Error())
		} else if t, ok := v.(assertions.IPTables); ok {
			in.IPTables = assertions.IPTables{Services: t.Services} // the chains themselves are long; the page draws the services
		}
		in.Error = strings.Join(errs, "; ")
		out = append(out, in)
	}
	return out
}

// handleFault runs a fault the page offers, as a lab operation (so the
// timeline marks it), and asks for an evaluation.
func (s *Server) handleFault(w http.ResponseWriter, r *http.Request) {
	var f Fault
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&f); err != nil {
		http.Error(w, "want {kind, target}", http.StatusBadRequest)
		return
	}
	sess := s.session()
	offered := faults(s.o.Words, sess.Topology(), cluster.CapabilitiesOf(sess.Cluster().Backend))
	if !slices.ContainsFunc(offered, func(o Fault) bool { return o.Kind == f.Kind && o.Target == f.Target }) {
		http.Error(w, "not a fault this page offers", http.StatusBadRequest)
		return
	}
	aimed, err := ops.Aimed(f.Kind, f.Target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	op, err := sess.PrepareOp(aimed, "")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	res := sess.Exec(ctx, op)
	s.kickNow()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"status": string(res.Status), "output": strings.TrimSpace(res.Output), "error": res.Error})
}
