package docker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/moby/client"
	"k8s.io/apimachinery/pkg/api/resource"

	"kubelab.dev/kubelab/cluster"
)

// capacityFlags turns each node's capacity into kubelet flags. A real
// kubelet reports the machine it runs on (every node container sees all of
// the host's CPUs and memory), so a node of a given size is made by
// reserving the rest: --kube-reserved takes the difference out of
// allocatable, which is what the scheduler's NodeResourcesFit counts
// (with the evictionHard thresholds at 0%, allocatable is exactly the
// capacity asked for). A node larger than the machine cannot be made:
// that is an error naming the node, before anything starts.
func capacityFlags(nodes []cluster.NodeSpec, cpus int, memory int64) (map[string][]string, error) {
	out := map[string][]string{}
	var errs []error
	for _, n := range nodes {
		flags, err := nodeCapacity(n, cpus, memory)
		if err != nil {
			errs = append(errs, fmt.Errorf("nodes %s: capacity: %w", n.Name, err))
			continue
		}
		out[n.Name] = flags
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("topology: %w", errors.Join(errs...))
	}
	return out, nil
}

func nodeCapacity(n cluster.NodeSpec, cpus int, memory int64) ([]string, error) {
	var reserved, flags []string
	for _, k := range slices.Sorted(maps.Keys(n.Capacity)) {
		q, err := resource.ParseQuantity(n.Capacity[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		switch k {
		case "cpu":
			have := int64(cpus) * 1000
			if q.MilliValue() > have {
				return nil, fmt.Errorf("cpu %s is more than this machine's %d CPUs (real kubelets report the machine)", q.String(), cpus)
			}
			if r := have - q.MilliValue(); r > 0 {
				reserved = append(reserved, fmt.Sprintf("cpu=%dm", r))
			}
		case "memory":
			if q.Value() > memory {
				return nil, fmt.Errorf("memory %s is more than this machine's %s (real kubelets report the machine)",
					q.String(), resource.NewQuantity(memory, resource.BinarySI).String())
			}
			if r := memory - q.Value(); r > 0 {
				reserved = append(reserved, "memory="+strconv.FormatInt(r, 10))
			}
		case "pods":
			flags = append(flags, "--max-pods="+strconv.FormatInt(q.Value(), 10))
		default:
			return nil, fmt.Errorf("%s: the docker backend sizes cpu, memory and pods only", k)
		}
	}
	if len(reserved) > 0 {
		flags = append(flags, "--kube-reserved="+strings.Join(reserved, ","))
	}
	return flags, nil
}

// machine is what every node container sees: the engine's CPUs and memory.
func (b *Backend) machine(ctx context.Context) (int, int64, error) {
	info, err := b.cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return 0, 0, fmt.Errorf("docker info: %w", err)
	}
	return info.Info.NCPU, info.Info.MemTotal, nil
}
