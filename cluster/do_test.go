package cluster_test

import (
	"context"
	"testing"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/clustertest"
)

// TestDoOnAControlPlaneNode: on a stacked topology, Do hits a
// control-plane node's four components at once; a start then hits only
// those not running, and one of a node that runs whole hits none; a
// partition is never a node's.
func TestDoOnAControlPlaneNode(t *testing.T) {
	ctx := context.Background()
	b := clustertest.New(cluster.Topology{Etcd: 3, Stacked: true}, nil, clustertest.Faults{})
	if err := b.Up(ctx, nil); err != nil {
		t.Fatal(err)
	}
	c := cluster.New(b, nil)
	if hit, err := c.Do(ctx, "control-plane-2", cluster.Kill); err != nil || hit != "etcd-2, kube-apiserver-2, kube-controller-manager-2, kube-scheduler-2" {
		t.Fatalf("kill control-plane-2: %q, %v", hit, err)
	}
	if _, err := c.Do(ctx, "kube-scheduler-2", cluster.Start); err != nil {
		t.Fatal(err)
	}
	if hit, err := c.Do(ctx, "control-plane-2", cluster.Start); err != nil || hit != "etcd-2, kube-apiserver-2, kube-controller-manager-2" {
		t.Errorf("start control-plane-2: %q, %v (the scheduler runs already)", hit, err)
	}
	if hits, node, err := c.NodeHits(ctx, "control-plane-1", cluster.Start); !node || err != nil || len(hits) != 0 {
		t.Errorf("start of a node that runs whole: %v %v %v, want no hits", hits, node, err)
	}
	if _, node, _ := c.NodeHits(ctx, "control-plane-1", cluster.Partition); node {
		t.Errorf("a partition of a control-plane node is taken as the node's")
	}
	if _, node, _ := c.NodeHits(ctx, "etcd-1", cluster.Kill); node {
		t.Errorf("etcd-1 is taken as a control-plane node")
	}
}
