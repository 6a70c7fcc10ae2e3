package cluster

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// maxMetrics bounds the /metrics text read from one component (an
// apiserver's is ~1-3 MB).
const maxMetrics = 32 << 20

// Metrics is the Prometheus text (exposition format 0.0.4) that the
// control-plane component called name serves at /metrics: an etcd member
// on its client HTTP URL, with etcd's client certificate; an apiserver, a
// kube-scheduler or a kube-controller-manager on its own secure port (not
// through the load balancer), with the admin's certificate, which the
// scheduler and controller-manager authorize through the apiserver as
// they would any client.
func (c *Cluster) Metrics(ctx context.Context, name string) ([]byte, error) {
	acc := c.Access()
	var (
		url  string
		tr   = &http.Transport{}
		conf *tls.Config
	)
	switch {
	case acc.EtcdEndpoints[name] != "" && acc.Serving[name] != "":
		url, conf = acc.Serving[name], acc.EtcdTLS
	case acc.APIServers[name] != "" || acc.Serving[name] != "":
		url = cmp.Or(acc.APIServers[name], acc.Serving[name])
		cfg, err := c.RESTConfig()
		if err != nil {
			return nil, err
		}
		if conf, err = rest.TLSConfigFor(cfg); err != nil {
			return nil, fmt.Errorf("metrics of %s: %w", name, err)
		}
	default:
		return nil, fmt.Errorf("no component %q serves metrics here; these do: %s", name, strings.Join(metricsServers(acc), ", "))
	}
	tr.TLSClientConfig = conf
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, "/")+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("metrics of %s: %w", name, err)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics of %s: %w", name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetrics))
	if err != nil {
		return nil, fmt.Errorf("metrics of %s: %w", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics of %s: %s: %s", name, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// MetricsServers names the components Metrics reads, sorted.
func (c *Cluster) MetricsServers() []string { return metricsServers(c.Access()) }

// metricsServers names the components Metrics reads, sorted.
func metricsServers(acc Access) []string {
	var out []string
	for _, m := range []map[string]string{acc.EtcdEndpoints, acc.APIServers, acc.Serving} {
		for n := range m {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
