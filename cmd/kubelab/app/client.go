package app

import (
	"context"
	"os"

	"kubelab.dev/kubelab/cluster/embedded"
)

// ClientEnv returns the environment that points kubectl or etcdctl at the
// lab cluster named by $KUBELAB_NAME (default "kubelab"), on either
// backend. It leaves an explicit KUBECONFIG alone. When no cluster has
// that name and exactly one embedded cluster exists, that one is used.
func ClientEnv(tool string) (map[string]string, error) {
	env := map[string]string{}
	if tool == "kubectl" && os.Getenv("KUBECONFIG") != "" {
		return env, nil
	}
	g := &globals{name: envOr("KUBELAB_NAME", "kubelab"), home: string(embedded.DefaultHome())}
	ctx := context.Background()
	b, err := openBackend(ctx, g)
	if err != nil {
		if names, lerr := embedded.DefaultHome().Clusters(); lerr == nil && len(names) == 1 {
			g.name = names[0]
			b, err = openBackend(ctx, g)
		}
	}
	if err != nil {
		if tool == "kubectl" {
			return env, nil // let kubectl report its own "no configuration" error
		}
		return nil, err
	}
	acc := b.Access()
	switch tool {
	case "kubectl":
		env["KUBECONFIG"] = acc.Kubeconfig
	case "etcdctl":
		if e, ok := b.(interface{ EtcdctlEnv() map[string]string }); ok {
			env = e.EtcdctlEnv()
		}
	}
	return env, nil
}
