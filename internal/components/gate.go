package components

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"kubelab.dev/kubelab/cluster/controlplane"
)

// waitForAPIServer waits, without limit (whoever started the component
// gives up on it), until the apiserver of kubeconfig is ready.
func waitForAPIServer(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("wait for the apiserver: %w", err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("wait for the apiserver: %w", err)
	}
	hc.Timeout = 2 * time.Second
	path := "/readyz"
	if p := os.Getenv(controlplane.EnvWaitReadyz); p != "" {
		path = p
	}
	said := false
	return wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true, nil
			}
		}
		if !said {
			fmt.Fprintf(os.Stderr, "kubelab: waiting for %s%s before starting\n", cfg.Host, path)
			said = true
		}
		return false, nil
	})
}
