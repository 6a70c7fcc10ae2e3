package engine

import (
	"k8s.io/client-go/kubernetes"

	"kubelab.dev/kubelab/ops"
)

// api holds the clients of a run, made on first use.
type api struct {
	cs  kubernetes.Interface
	ops *ops.Clients
}

func (x *run) api() (*api, error) {
	if x.clients != nil {
		return x.clients, nil
	}
	c, err := ops.NewClients(x.c)
	if err != nil {
		return nil, err
	}
	x.clients = &api{cs: c.Clientset, ops: c}
	return x.clients, nil
}
