// Package seedtest compares the API objects of two clusters, one booted
// from nothing and one from the seed, for the backends' seed tests: a
// seeded control plane must be the real, freshly bootstrapped one.
package seedtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"kubelab.dev/kubelab/cluster"
)

// Up boots b, taking it down when the test ends, and returns its progress
// lines ("component message").
func Up(t *testing.T, b cluster.Backend) []string {
	t.Helper()
	t.Cleanup(func() {
		if err := b.Down(context.WithoutCancel(t.Context())); err != nil {
			t.Errorf("down %s: %v", b.Topology().Name, err)
		}
	})
	var mu sync.Mutex
	var lines []string
	if err := b.Up(t.Context(), func(e cluster.Event) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, e.Component+" "+e.Message)
	}); err != nil {
		t.Fatalf("up %s: %v", b.Topology().Name, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(lines)
}

// Said reports whether a progress line contains part.
func Said(lines []string, part string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, part) })
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

// Objects lists every object of the cluster of kubeconfig, settled (its apiserver fully
// ready, DNS served), normalized: without uids, resource versions,
// timestamps, managed fields and status; generated names as their prefix;
// the contents of volatile resources dropped.
func Objects(t *testing.T, kubeconfig string) map[string]any {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cfg.WarningHandler = rest.NoWarnings{} // deprecated kinds are listed on purpose
	ctx := t.Context()
	// The full /readyz: the seeded apiserver's bootstrap hooks have
	// confirmed what the seed holds, the fresh one's wrote it.
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return false, err
		}
		last = dc.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("apiserver /readyz: %v (last: %v)", err, last)
	}
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
