// Package upstream makes the registrations that upstream Kubernetes
// mains (kube-apiserver, kube-controller-manager, kube-scheduler) make
// before they run: the JSON log format, client-go's metrics and the
// version metric. The component packages that link those mains import it.
package upstream

import (
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
)
