package assertions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	obs "kubelab.dev/kubelab/observe"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"kubelab.dev/kubelab/cluster"
)

// Live is a View over a running cluster. Kubernetes objects come from
// client-go informers (a watch-fed cache, so evaluating is cheap and
// Changed fires on every change); the Raft table, component states and
// apiserver health are read from the cluster at each evaluation, and so
// are get(), list() (a dynamic client over discovery: no informer watches
// arbitrary kinds) and can() (a SubjectAccessReview); expressions using
// them are polled.
type Live struct {
	c       *cluster.Cluster
	start   time.Time
	factory informers.SharedInformerFactory
	changed chan struct{}
	stop    context.CancelFunc

	mu       sync.Mutex
	handlers []func(kind string, old, new any)

	httpc *http.Client
	rest  *rest.Config

	generic generic // get(), list(), can(): made on first use

	audit        auditLog
	auditFailure error // why an audit log could not be followed

	asked []string // namespace/name of the pods scheduling() was asked about, in order

	schedMu sync.Mutex
	sched   map[string]*obs.DecisionLog // each scheduler's decision log, followed

	pods podViews
}

// readyzTimeout bounds each GET /readyz of apiservers(): the
// apiserver's own etcd readiness check may take up to its default
// --etcd-readycheck-timeout, 2 s, on a loaded machine (a linearizable read
// waits behind etcd's fsyncs), and an answer within it is still an
// answer; 1 s, as before, counted such an apiserver not ready.
const readyzTimeout = 3 * time.Second

// NewLive starts informers on the cluster and waits for their caches.
// start is the lab's start time (for elapsed). Close stops the informers.
func NewLive(ctx context.Context, c *cluster.Cluster, start time.Time) (*Live, error) {
	cs, err := c.Client()
	if err != nil {
		return nil, err
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("apiserver transport: %w", err)
	}
	ictx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &Live{
		c: c, start: start, changed: make(chan struct{}, 1), stop: cancel,
		factory: informers.NewSharedInformerFactory(cs, 0),
		httpc:   &http.Client{Transport: tr, Timeout: readyzTimeout},
		rest:    cfg,
	}
	watch := map[string]cache.SharedIndexInformer{
		"Pod":           l.factory.Core().V1().Pods().Informer(),
		"Node":          l.factory.Core().V1().Nodes().Informer(),
		"Deployment":    l.factory.Apps().V1().Deployments().Informer(),
		"ReplicaSet":    l.factory.Apps().V1().ReplicaSets().Informer(),
		"EndpointSlice": l.factory.Discovery().V1().EndpointSlices().Informer(),
		"Lease":         l.factory.Coordination().V1().Leases().Informer(),
		"Event":         l.factory.Core().V1().Events().Informer(),
	}
	for kind, inf := range watch {
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { l.notify(kind, nil, obj) },
			UpdateFunc: func(old, obj any) { l.notify(kind, old, obj) },
			DeleteFunc: func(obj any) { l.notify(kind, obj, nil) },
		})
		if err != nil {
			cancel()
			return nil, err
		}
	}
	l.tailAudit(ictx, c.Access().AuditLogs)
	l.factory.Start(ictx.Done())
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	for kind, ok := range l.factory.WaitForCacheSync(sctx.Done()) {
		if !ok {
			cancel()
			return nil, fmt.Errorf("sync %s cache: %w", kind, sctx.Err())
		}
	}
	return l, nil
}

// Close stops the informers.
func (l *Live) Close() { l.stop(); l.factory.Shutdown() }

// Changed receives a value after any watched object changed.
func (l *Live) Changed() <-chan struct{} { return l.changed }

// OnChange registers a handler called for every informer event with the
// object's kind ("Pod", "Node", "Lease", "EndpointSlice", "Deployment",
// "Event") and its old and new versions (nil on add or delete).
func (l *Live) OnChange(f func(kind string, old, new any)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handlers = append(l.handlers, f)
}

func (l *Live) notify(kind string, old, new any) {
	if kind == "Pod" && new == nil {
		l.pods.forget(old)
	}
	select {
	case l.changed <- struct{}{}:
	default:
	}
	l.mu.Lock()
	hs := append([]func(string, any, any){}, l.handlers...)
	l.mu.Unlock()
	for _, h := range hs {
		h(kind, old, new)
	}
}

// Pods implements View.
func (l *Live) Pods(_ context.Context, namespace, selector string) ([]Pod, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	ps, err := l.factory.Core().V1().Pods().Lister().Pods(namespace).List(sel)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	out := make([]Pod, 0, len(ps))
	for _, p := range ps {
		out = append(out, l.pods.get(p))
	}
	return out, err
}

// Pod implements View.
func (l *Live) Pod(_ context.Context, namespace, name string) (Pod, error) {
	p, err := l.factory.Core().V1().Pods().Lister().Pods(namespace).Get(name)
	if err != nil {
		return Pod{Name: name, Namespace: namespace}, notFoundIsNoError(err)
	}
	return toPod(p), nil
}

// notFoundIsNoError drops the error of an object that does not exist: its
// zero value says so.
func notFoundIsNoError(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func toPod(p *corev1.Pod) Pod {
	out := Pod{
		Name: p.Name, Namespace: p.Namespace, Phase: string(p.Status.Phase), Node: p.Spec.NodeName,
		IP: p.Status.PodIP, Labels: p.Labels, Conditions: map[string]string{},
		Deleting: p.DeletionTimestamp != nil, Annotations: p.Annotations, Images: images(p.Spec.Containers),
	}
	if p.Spec.Priority != nil {
		out.Priority = int(*p.Spec.Priority)
	}
	for _, c := range p.Status.Conditions {
		out.Conditions[string(c.Type)] = string(c.Status)
		if c.Type == corev1.PodReady {
			out.Ready = c.Status == corev1.ConditionTrue
		}
	}
	out.QOS = string(p.Status.QOSClass)
	var last time.Time
	for _, cs := range p.Status.ContainerStatuses {
		out.Restarts += int(cs.RestartCount)
		for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
			if t != nil && (out.LastTermination == "" || t.FinishedAt.After(last)) {
				out.LastTermination, last = t.Reason, t.FinishedAt.Time
			}
		}
	}
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			out.Owner = o.Kind + "/" + o.Name
		}
	}
	return out
}

// images lists the containers' images, in order.
func images(cs []corev1.Container) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Image)
	}
	return out
}

// revisionAnnotation is where the deployment controller records a
// rollout's revision, on the Deployment and its ReplicaSets.
const revisionAnnotation = "deployment.kubernetes.io/revision"

func revision(annotations map[string]string) int {
	n, _ := strconv.Atoi(annotations[revisionAnnotation])
	return n
}

// Nodes implements View.
func (l *Live) Nodes(_ context.Context) ([]Node, error) {
	ns, err := l.factory.Core().V1().Nodes().Lister().List(labels.Everything())
	sort.Slice(ns, func(i, j int) bool { return ns[i].Name < ns[j].Name })
	out := make([]Node, 0, len(ns))
	for _, n := range ns {
		node, nerr := l.toNode(n)
		out, err = append(out, node), errors.Join(err, nerr)
	}
	return out, err
}

// Node implements View.
func (l *Live) Node(_ context.Context, name string) (Node, error) {
	n, err := l.factory.Core().V1().Nodes().Lister().Get(name)
	if err != nil {
		return Node{Name: name}, notFoundIsNoError(err)
	}
	return l.toNode(n)
}

func (l *Live) toNode(n *corev1.Node) (Node, error) {
	out := Node{Name: n.Name, Exists: true, Unschedulable: n.Spec.Unschedulable, Labels: n.Labels, Conditions: map[string]string{}, Taints: []Taint{}}
	for _, c := range n.Status.Conditions {
		out.Conditions[string(c.Type)] = string(c.Status)
		if c.Type == corev1.NodeReady {
			out.ReadyStatus = string(c.Status)
			out.Ready = c.Status == corev1.ConditionTrue
		}
	}
	for _, t := range n.Spec.Taints {
		out.Taints = append(out.Taints, Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	ps, err := l.factory.Core().V1().Pods().Lister().List(labels.Everything())
	for _, p := range ps {
		if p.Spec.NodeName == n.Name && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out.Pods++
		}
	}
	return out, err
}

// Deployment implements View.
func (l *Live) Deployment(_ context.Context, namespace, name string) (Deployment, error) {
	d, err := l.factory.Apps().V1().Deployments().Lister().Deployments(namespace).Get(name)
	if err != nil {
		return Deployment{Name: name}, notFoundIsNoError(err)
	}
	out := Deployment{Name: name, Exists: true, Ready: int(d.Status.ReadyReplicas), Available: int(d.Status.AvailableReplicas), Updated: int(d.Status.UpdatedReplicas),
		Revision: revision(d.Annotations), Images: images(d.Spec.Template.Spec.Containers), Labels: d.Labels, Annotations: d.Annotations}
	if d.Spec.Replicas != nil {
		out.Replicas = int(*d.Spec.Replicas)
	}
	return out, nil
}

// ReplicaSets implements View.
func (l *Live) ReplicaSets(_ context.Context, namespace, selector string) ([]ReplicaSet, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	rss, err := l.factory.Apps().V1().ReplicaSets().Lister().ReplicaSets(namespace).List(sel)
	sort.Slice(rss, func(i, j int) bool { return rss[i].Name < rss[j].Name })
	out := make([]ReplicaSet, 0, len(rss))
	for _, rs := range rss {
		r := ReplicaSet{Name: rs.Name, Ready: int(rs.Status.ReadyReplicas), Available: int(rs.Status.AvailableReplicas),
			Revision: revision(rs.Annotations), Images: images(rs.Spec.Template.Spec.Containers), Annotations: rs.Annotations}
		if rs.Spec.Replicas != nil {
			r.Replicas = int(*rs.Spec.Replicas)
		}
		for _, o := range rs.OwnerReferences {
			if o.Controller != nil && *o.Controller {
				r.Owner = o.Kind + "/" + o.Name
			}
		}
		out = append(out, r)
	}
	return out, err
}

// Endpoints implements View: every endpoint of the Service's EndpointSlices.
func (l *Live) Endpoints(_ context.Context, namespace, service string) ([]Endpoint, error) {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service})
	slices, err := l.factory.Discovery().V1().EndpointSlices().Lister().EndpointSlices(namespace).List(sel)
	var out []Endpoint
	for _, s := range slices {
		for _, e := range s.Endpoints {
			ep := Endpoint{Ready: e.Conditions.Ready == nil || *e.Conditions.Ready}
			if len(e.Addresses) > 0 {
				ep.IP = e.Addresses[0]
			}
			if e.TargetRef != nil {
				ep.Pod = e.TargetRef.Name
			}
			if e.NodeName != nil {
				ep.Node = *e.NodeName
			}
			out = append(out, ep)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].IP < out[j].IP })
	return out, err
}

// Lease implements View.
func (l *Live) Lease(_ context.Context, namespace, name string) (Lease, error) {
	le, err := l.factory.Coordination().V1().Leases().Lister().Leases(namespace).Get(name)
	if err != nil {
		return Lease{Name: name}, notFoundIsNoError(err)
	}
	out := Lease{Name: name}
	if le.Spec.HolderIdentity != nil {
		out.Holder = *le.Spec.HolderIdentity
		out.Component, _, _ = strings.Cut(out.Holder, "_")
	}
	if le.Spec.LeaseTransitions != nil {
		out.Transitions = int(*le.Spec.LeaseTransitions)
	}
	if le.Spec.RenewTime != nil {
		out.Age = time.Since(le.Spec.RenewTime.Time).Seconds()
	}
	return out, nil
}

// Events implements View.
func (l *Live) Events(_ context.Context, reason string) ([]Event, error) {
	es, err := l.factory.Core().V1().Events().Lister().List(labels.Everything())
	sort.Slice(es, func(i, j int) bool { return es[i].LastTimestamp.Before(&es[j].LastTimestamp) })
	var out []Event
	for _, e := range es {
		if reason != "" && e.Reason != reason {
			continue
		}
		out = append(out, Event{Reason: e.Reason, Message: e.Message, Type: e.Type,
			Kind: e.InvolvedObject.Kind, Object: e.InvolvedObject.Name, Count: int(e.Count)})
	}
	return out, err
}

// Raft implements View, asking every etcd member now.
func (l *Live) Raft(ctx context.Context) (Raft, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ms, err := l.c.EtcdStatus(ctx)
	return RaftFrom(ms), err
}

// RaftFrom summarizes the facade's member statuses.
func RaftFrom(ms []cluster.EtcdMember) Raft {
	r := Raft{Members: []Member{}}
	for _, m := range ms {
		r.Members = append(r.Members, Member{Name: m.Name, ID: m.ID, Reachable: m.Reachable, IsLeader: m.IsLeader,
			Term: int(m.Term), RaftIndex: int(m.RaftIndex), AppliedIndex: int(m.AppliedIndex), DBSize: int(m.DBSize)})
		if !m.Reachable {
			continue
		}
		r.Reachable++
		r.Term = max(r.Term, int(m.Term))
		if m.IsLeader {
			r.Leader = m.Name
		}
	}
	r.HasLeader = r.Leader != ""
	r.Quorum = r.HasLeader && r.Reachable > len(ms)/2
	return r
}

// Components implements View.
func (l *Live) Components(ctx context.Context) ([]Component, error) {
	cs, err := l.c.Components(ctx)
	out := make([]Component, 0, len(cs))
	for _, c := range cs {
		out = append(out, Component{Name: c.Name, Role: string(c.Role), State: string(c.State), PID: c.PID, Exit: c.Exit})
	}
	return out, err
}

// Component implements View.
func (l *Live) Component(ctx context.Context, name string) (Component, error) {
	cs, err := l.Components(ctx)
	for _, c := range cs {
		if c.Name == name {
			return c, err
		}
	}
	return Component{Name: name}, err
}

// APIServers implements View: GET /readyz on each instance directly.
// An instance that does not answer is not ready; the error says why.
func (l *Live) APIServers(ctx context.Context) ([]APIServer, error) {
	acc := l.c.Access()
	names := make([]string, 0, len(acc.APIServers))
	for n := range acc.APIServers {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]APIServer, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = APIServer{Name: n}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, acc.APIServers[n]+"/readyz?verbose", nil)
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", n, err)
				return
			}
			resp, err := l.httpc.Do(req)
			if err != nil {
				out[i].Failing = []string{"no answer: " + noAnswer(err)}
				errs[i] = fmt.Errorf("%s: %w", n, err)
				return
			}
			defer resp.Body.Close()
			out[i].Ready = resp.StatusCode == http.StatusOK
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			out[i].Failing = failedChecks(body)
			if !out[i].Ready && len(out[i].Failing) == 0 {
				out[i].Failing = []string{fmt.Sprintf("no answer: HTTP %d", resp.StatusCode)}
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// failedChecks are the names of the checks a verbose /readyz body marks
// failed: its lines "[-]NAME failed: reason withheld".
func failedChecks(body []byte) []string {
	var out []string
	for line := range strings.Lines(string(body)) {
		if rest, ok := strings.CutPrefix(line, "[-]"); ok {
			name, _, _ := strings.Cut(rest, " ")
			out = append(out, name)
		}
	}
	return out
}

// noAnswer is the last part of a request's error, the one that says why
// ("connection refused", "context deadline exceeded").
func noAnswer(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// Elapsed implements View.
func (l *Live) Elapsed() float64 { return time.Since(l.start).Seconds() }

// Namespace is where expressions look unless told otherwise: the
// cluster's run namespace (see cluster.Cluster.Namespace).
func (l *Live) Namespace() string { return l.c.Namespace() }
