package controlplane

import (
	"context"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// DNSImage is the image of the cluster DNS addon's pods: upstream CoreDNS
// built locally (images/coredns), preloaded on docker workers; kwok only
// pretends to run it on the embedded backend.
const DNSImage = "kubelab/coredns:dev"

// corefile serves cluster.local from the Kubernetes API, reached with the
// pod's ServiceAccount; no upstream resolvers (a lab cluster has no
// outside network).
const corefile = `.:53 {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    loadbalance
}
`

// InstallDNS creates the cluster DNS addon as kubeadm does: the coredns
// Deployment (pods labelled k8s-app=kube-dns) in kube-system behind the
// kube-dns Service at DNSServiceIP, with its ServiceAccount (bound to
// CoreDNS's ClusterRole, see RBAC) and its Corefile in a ConfigMap.
// Objects that exist are left as they are. One replica (kubeadm runs two):
// a lab's nodes are few and small, and labs count what lands on them.
func InstallDNS(ctx context.Context, cs kubernetes.Interface) error {
	if err := RBAC(ctx, cs, CoreDNS); err != nil {
		return err
	}
	const ns = "kube-system"
	labels := map[string]string{"k8s-app": "kube-dns"}
	if err := Create(ctx, "dns addon serviceaccount", func(ctx context.Context) (any, error) {
		return cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: CoreDNS.ServiceAccountName()}}, metav1.CreateOptions{})
	}); err != nil {
		return err
	}
	if err := Create(ctx, "dns addon configmap", func(ctx context.Context) (any, error) {
		return cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "coredns"}, Data: map[string]string{"Corefile": corefile}}, metav1.CreateOptions{})
	}); err != nil {
		return err
	}
	if err := Create(ctx, "dns addon deployment", func(ctx context.Context) (any, error) {
		return cs.AppsV1().Deployments(ns).Create(ctx, dnsDeployment(labels), metav1.CreateOptions{})
	}); err != nil {
		return err
	}
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	return Create(ctx, "dns addon service", func(ctx context.Context) (any, error) {
		return cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Labels: map[string]string{"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"}},
			Spec: corev1.ServiceSpec{Selector: labels, ClusterIP: DNSServiceIP, Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: udp, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Port: 53, Protocol: tcp, TargetPort: intstr.FromInt32(53)}}},
		}, metav1.CreateOptions{})
	})
}

func dnsDeployment(labels map[string]string) *appsv1.Deployment {
	one := int32(1)
	no := false
	probe := func(path string, port int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}},
			PeriodSeconds: 1, FailureThreshold: 5, TimeoutSeconds: 2}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: CoreDNS.ServiceAccountName(),
					PriorityClassName:  "system-cluster-critical",
					DNSPolicy:          corev1.DNSDefault, // not itself
					Tolerations: []corev1.Toleration{
						{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
						{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule},
					},
					Containers: []corev1.Container{{
						Name: "coredns", Image: DNSImage, ImagePullPolicy: corev1.PullNever,
						Args: []string{"-conf", "/etc/coredns/Corefile"},
						Ports: []corev1.ContainerPort{
							{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
							{Name: "dns-tcp", ContainerPort: 53, Protocol: corev1.ProtocolTCP},
						},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("70Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("170Mi")},
						},
						// Probed every second, not kubeadm's 10 s: a lab
						// cluster is usable once DNS answers.
						LivenessProbe:  probe("/health", 8080),
						ReadinessProbe: probe("/ready", 8181),
						VolumeMounts:   []corev1.VolumeMount{{Name: "config-volume", MountPath: "/etc/coredns", ReadOnly: true}},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: &no,
							Capabilities:             &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}},
						},
					}},
					Volumes: []corev1.Volume{{Name: "config-volume", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "coredns"}}}}},
				},
			},
		},
	}
}

// DNSServed checks the DNS addon serves: the coredns Deployment's pods
// (k8s-app=kube-dns) are available, and every ready endpoint of the
// kube-dns Service is one of them, Running on a node. It returns their
// pod IPs.
func DNSServed(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if d.Status.ObservedGeneration < d.Generation || d.Status.AvailableReplicas < *d.Spec.Replicas {
		return nil, fmt.Errorf("%d of %d replicas available", d.Status.AvailableReplicas, *d.Spec.Replicas)
	}
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
	if err != nil {
		return nil, err
	}
	running := map[string]bool{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" && p.Status.PodIP != "" {
			running[p.Status.PodIP] = true
		}
	}
	slices, err := cs.DiscoveryV1().EndpointSlices("kube-system").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kube-dns"})
	if err != nil {
		return nil, err
	}
	var ips []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				if !running[a] {
					return nil, fmt.Errorf("kube-dns endpoint %s is not a Running coredns pod", a)
				}
				ips = append(ips, a)
			}
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("kube-dns has no ready endpoint yet")
	}
	sort.Strings(ips)
	return ips, nil
}

// WaitDNS waits until the DNS addon serves (DNSServed), asking every
// 50 ms: call it once a node can take the DNS Pod.
func WaitDNS(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, last = DNSServed(ctx, cs)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("cluster DNS (kube-system/coredns): %v: %w", last, err)
	}
	return nil
}
