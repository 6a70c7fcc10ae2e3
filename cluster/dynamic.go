package cluster

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// Dynamic reads and writes objects of any kind: a dynamic client and the
// discovery-backed RESTMapper that resolves kinds and resource names.
type Dynamic struct {
	Client dynamic.Interface
	// Mapper resolves kinds and resources from discovery, cached; Reset it
	// when a kind may be new (a CRD or an APIService just added).
	Mapper *restmapper.DeferredDiscoveryRESTMapper
	// Shortcuts is Mapper that also knows kubectl's short names ("pdb",
	// "deploy").
	Shortcuts meta.RESTMapper
}

type dynamicOnce struct {
	once sync.Once
	d    *Dynamic
	err  error
}

// Dynamic returns the cluster's clients for objects of any kind, made once
// and shared by whoever asks (operations and expressions alike).
func (c *Cluster) Dynamic() (*Dynamic, error) {
	c.mu.Lock()
	if c.dyn == nil {
		c.dyn = &dynamicOnce{}
	}
	o := c.dyn
	c.mu.Unlock()
	o.once.Do(func() {
		cfg, err := c.RESTConfig()
		if err != nil {
			o.err = err
			return
		}
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			o.err = fmt.Errorf("dynamic client: %w", err)
			return
		}
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			o.err = fmt.Errorf("discovery client: %w", err)
			return
		}
		cached := memory.NewMemCacheClient(dc)
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
		o.d = &Dynamic{Client: dyn, Mapper: mapper, Shortcuts: restmapper.NewShortcutExpander(mapper, cached, func(string) {})}
	})
	return o.d, o.err
}
