package app

import (
	"os"
	"strings"

	"kubelab.dev/kubelab/cluster/embedded"
)

// ClientEnv returns the environment that points kubectl or etcdctl at the
// lab cluster named by $KUBELAB_NAME (default "kubelab"). It leaves an
// explicit KUBECONFIG alone. When no cluster has that name and exactly one
// cluster exists, that one is used.
func ClientEnv(tool string) (map[string]string, error) {
	env := map[string]string{}
	if tool == "kubectl" && os.Getenv("KUBECONFIG") != "" {
		return env, nil
	}
	b, err := openDefault()
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
		var eps []string
		for _, ep := range acc.EtcdEndpoints {
			eps = append(eps, ep)
		}
		f := b.EtcdClientFiles()
		env["ETCDCTL_ENDPOINTS"] = strings.Join(eps, ",")
		env["ETCDCTL_CACERT"], env["ETCDCTL_CERT"], env["ETCDCTL_KEY"] = f[0], f[1], f[2]
	}
	return env, nil
}

func openDefault() (*embedded.Backend, error) {
	name := envOr("KUBELAB_NAME", "kubelab")
	opts := embedded.Options{}
	b, err := embedded.Open(name, opts)
	if err == nil {
		return b, nil
	}
	names, lerr := embedded.DefaultHome().Clusters()
	if lerr == nil && len(names) == 1 {
		return embedded.Open(names[0], opts)
	}
	return nil, err
}
