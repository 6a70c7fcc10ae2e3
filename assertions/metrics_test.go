package assertions

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// metricsText is a trimmed /metrics of a real apiserver and etcd member.
const metricsText = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 3
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 2
# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds.
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{verb="POST",le="0.005"} 2
apiserver_request_duration_seconds_bucket{verb="POST",le="0.1"} 4
apiserver_request_duration_seconds_bucket{verb="POST",le="+Inf"} 4
apiserver_request_duration_seconds_sum{verb="POST"} 0.0125
apiserver_request_duration_seconds_count{verb="POST"} 4
# HELP etcd_server_is_leader Whether or not this member is a leader. 1 if is, 0 otherwise.
# TYPE etcd_server_is_leader gauge
etcd_server_is_leader 1
`

type metricsView struct {
	View
	text map[string]string
}

func (v metricsView) Metrics(_ context.Context, c string) ([]byte, error) {
	if t, ok := v.text[c]; ok {
		return []byte(t), nil
	}
	return nil, fmt.Errorf("no component %q serves metrics here", c)
}

func TestMetric(t *testing.T) {
	v := metricsView{text: map[string]string{"kube-apiserver-1": metricsText}}
	for src, want := range map[string]any{
		`metric("kube-apiserver-1", "apiserver_request_total")`:                                             13.0,
		`metric("kube-apiserver-1", "apiserver_request_total", {"verb": "POST", "resource": "configmaps"})`: 4.0,
		`metric("kube-apiserver-1", "apiserver_request_total", {"verb": "POST", "code": 201})`:              3.0,
		`metric("kube-apiserver-1", "apiserver_request_total", {"verb": "DELETE"})`:                         0.0,
		`metric("kube-apiserver-1", "apiserver_request_duration_seconds_count", {"verb": "POST"})`:          4.0,
		`metric("kube-apiserver-1", "apiserver_request_duration_seconds_sum")`:                              0.0125,
		`metric("kube-apiserver-1", "apiserver_request_duration_seconds_bucket", {"le": "0.005"})`:          2.0,
		`metric("kube-apiserver-1", "apiserver_request_duration_seconds_bucket", {"le": "+Inf"})`:           4.0,
		`metric("kube-apiserver-1", "etcd_server_is_leader") == 1`:                                          true,
	} {
		c, err := Compile(src, nil, false)
		if err != nil {
			t.Fatalf("Compile(%s): %v", src, err)
		}
		got, err := Eval(context.Background(), c, v, nil)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
	for src, want := range map[string]string{
		`metric("kube-apiserver-1", "apiserver_requests_total") > 0`:                                 `kube-apiserver-1 has no metric apiserver_requests_total, or has not recorded it yet (did you mean "apiserver_request_total"?)`,
		`metric("kube-apiserver-1", "apiserver_request_duration_seconds") > 0`:                       "a histogram: ask for its _count or _sum",
		`metric("kube-apiserver-1", "apiserver_request_duration_seconds_bucket") > 0`:                `say which bucket with the label le`,
		`metric("kube-apiserver-1", "apiserver_request_duration_seconds_bucket", {"le": "0.2"}) > 0`: `no bucket le="0.2"; its buckets: 0.005, 0.1, +Inf`,
		`metric("etcd-9", "etcd_server_is_leader") > 0`:                                              `no component "etcd-9" serves metrics here`,
	} {
		c, err := Compile(src, nil, true)
		if err != nil {
			t.Fatalf("Compile(%s): %v", src, err)
		}
		if ok, err := Holds(context.Background(), c, v, nil); ok || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Holds = %v, %v; want false and an error with %q", src, ok, err, want)
		}
		if got := String(Explain(context.Background(), c, v, nil)); !strings.Contains(got, want) {
			t.Errorf("%s explained:\n%s\nwant the lookup's error %q", src, got, want)
		}
	}
}
