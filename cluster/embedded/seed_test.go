package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/seed"
)

// TestSeededClusterIsTheFreshOne boots a cluster from nothing (which takes
// the seed), then one from the seed, and compares every API object of
// the two: the seeded control plane must be the real, freshly bootstrapped
// one, differing only where two clusters always differ (listed in
// volatile). Then it damages the seed: the next boot says so, boots from
// nothing, and takes a whole seed again.
func TestSeededClusterIsTheFreshOne(t *testing.T) {
	bin := binary(t)
	seeds := t.TempDir()
	home := t.TempDir()
	boot := func(name string) (*Backend, []string) {
		t.Helper()
		b, err := New(cluster.Topology{Name: name, Workers: 2}, Options{Home: Home(home), Binary: bin, Ephemeral: true, Seeds: seeds})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var lines []string
		t.Cleanup(func() { _ = b.Down(context.WithoutCancel(t.Context())) })
		if err := b.Up(t.Context(), func(e cluster.Event) {
			mu.Lock()
			lines = append(lines, e.Component+" "+e.Message)
			mu.Unlock()
		}); err != nil {
			t.Fatalf("up %s: %v", name, err)
		}
		return b, lines
	}
	said := func(lines []string, part string) bool {
		return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, part) })
	}

	fresh, lines := boot("fresh")
	if !said(lines, "booting from nothing, then taking one") || !said(lines, "took seed") {
		t.Fatalf("the first boot did not boot fresh and take the seed:\n%s", strings.Join(lines, "\n"))
	}
	seeded, lines := boot("seeded")
	if !said(lines, "restored seed") {
		t.Fatalf("the second boot did not start from the seed:\n%s", strings.Join(lines, "\n"))
	}
	a, b := objects(t, fresh), objects(t, seeded)
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("a seeded cluster's objects differ from a fresh one's beyond the listed differences (-fresh +seeded):\n%s", d)
	}
	t.Logf("compared %d objects", len(a))

	key, err := fresh.seedKey()
	if err != nil {
		t.Fatal(err)
	}
	cache := seed.Cache{Dir: seeds}
	snap := cache.Path(key)
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(snap, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, lines = boot("after-damage")
	if !said(lines, "seed is corrupt") || !said(lines, "discarded") || !said(lines, "took seed") {
		t.Fatalf("a damaged seed was not reported, discarded and taken again:\n%s", strings.Join(lines, "\n"))
	}
	if _, ok, err := cache.Get(key); !ok || err != nil {
		t.Errorf("no whole seed after the rebuild: ok %t, err %v", ok, err)
	}
}

// volatile are the differences two clusters always have, fresh or
// seeded: what the controllers and components write as they run (times,
// holders, events), names generated at random, what comes from each
// cluster's own PKI, and the port its apiservers listen on (the
// kubernetes Service's target port).
var volatile = struct {
	// skip are resources not compared at all.
	skip map[string]string
	// resources whose objects are compared by name only.
	byName map[string]string
	// configMaps whose data is each cluster's CA.
	caData map[string]bool
}{
	skip: map[string]string{
		"events":               "written as things happen, named after the time",
		"events.events.k8s.io": "written as things happen, named after the time",
	},
	byName: map[string]string{
		"leases.coordination.k8s.io":      "holders and renew times",
		"pods":                            "status, and a projected token volume with a random name",
		"nodes":                           "status: heartbeats and conditions",
		"endpoints":                       "the controllers' timestamps",
		"endpointslices.discovery.k8s.io": "the controllers' timestamps",
		"replicasets.apps":                "status",
		"deployments.apps":                "status",
		"secrets":                         "keys of each cluster's own",
	},
	caData: map[string]bool{
		"kube-system/extension-apiserver-authentication": true, // the apiserver's client and front-proxy CAs
		"kube-public/kube-root-ca.crt":                   true,
		"kube-system/kube-root-ca.crt":                   true,
		"kube-node-lease/kube-root-ca.crt":               true,
		"default/kube-root-ca.crt":                       true,
	},
}

// objects lists every object of the cluster, settled (its apiserver fully
// ready, DNS served), normalized: without uids, resource versions,
// timestamps, managed fields and status; generated names as their prefix;
// the contents of volatile resources dropped.
func objects(t *testing.T, b *Backend) map[string]any {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", b.Access().Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	ctx := t.Context()
	// The full /readyz: the seeded apiserver's bootstrap hooks have
	// confirmed what the seed holds, the fresh one's wrote it.
	eventually(t, time.Minute, "apiserver /readyz", func(ctx context.Context) error {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return err
		}
		return dc.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	})
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if !slices.Contains(r.Verbs, "list") || strings.Contains(r.Name, "/") {
				continue
			}
			res := r.Name
			if gv.Group != "" {
				res += "." + gv.Group
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list %s: %v", res, err)
			}
			if _, skip := volatile.skip[res]; skip {
				continue
			}
			for _, u := range items.Items {
				k, v := normalize(res, u)
				out[k] = v
			}
		}
	}
	return out
}

func normalize(res string, u unstructured.Unstructured) (string, any) {
	name := u.GetName()
	if g := u.GetGenerateName(); g != "" {
		name = g + "*"
	}
	id := u.GetNamespace() + "/" + name
	key := fmt.Sprintf("%s %s", res, id)
	if res == "clustertrustbundles.certificates.k8s.io" {
		// Named after, and holding, each cluster's own CA.
		spec, _ := u.Object["spec"].(map[string]any)
		return fmt.Sprintf("%s %v:<each cluster's CA>", res, spec["signerName"]), nil
	}
	if _, ok := volatile.byName[res]; ok {
		return key, nil
	}
	o := u.Object
	delete(o, "status")
	md, _ := o["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "ownerReferences"} {
		delete(md, f)
	}
	md["name"] = name
	if res == "services" && id == "default/kubernetes" {
		// Its target port is where each cluster's apiservers listen.
		spec, _ := o["spec"].(map[string]any)
		if ports, _ := spec["ports"].([]any); len(ports) == 1 {
			if p, ok := ports[0].(map[string]any); ok {
				p["targetPort"] = "<the apiservers' port>"
			}
		}
	}
	if res == "configmaps" && volatile.caData[id] {
		data, _ := o["data"].(map[string]any)
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o["data"] = keys // each cluster's own CA
	}
	b, _ := json.Marshal(o)
	var v any
	_ = json.Unmarshal(b, &v)
	return key, v
}
