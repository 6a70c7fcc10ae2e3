package controlplane

import (
	"context"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// rules are the least privileges of the identities whose component has no
// bootstrap ClusterRole in the apiserver.
var rules = map[string][]rbacv1.PolicyRule{
	// kwok keeps simulated nodes alive: it renews their Leases, updates
	// node and pod status, and deletes pods being terminated.
	Kwok.User: {
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
		{APIGroups: []string{""}, Resources: []string{"nodes/status", "pods/status"}, Verbs: []string{"get", "patch", "update"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "patch", "update", "delete"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "patch", "update"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
	},
	// The ClusterRole kubeadm gives CoreDNS.
	CoreDNS.User: {
		{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
	},
}

// RBAC creates (or leaves as they are) the ClusterRole and
// ClusterRoleBinding of each identity that needs one of kubelab's, under
// the identity's username (bound to its ServiceAccount, if it has one). Run it with an admin client once the apiservers
// are ready and before the identity's component starts.
func RBAC(ctx context.Context, cs kubernetes.Interface, ids ...Identity) error {
	for _, id := range ids {
		rs, ok := rules[id.User]
		if !ok {
			return fmt.Errorf("rbac for %s: no rules (it has an upstream role)", id.User)
		}
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: id.User, Labels: map[string]string{"app.kubernetes.io/managed-by": "kubelab"}},
			Rules:      rs,
		}
		if err := Create(ctx, "clusterrole "+id.User, func(ctx context.Context) (any, error) {
			return cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
		}); err != nil {
			return err
		}
		subject := rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: id.User}
		if ns, name, ok := strings.Cut(id.ServiceAccount, "/"); ok {
			subject = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: id.User, Labels: role.Labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: id.User},
			Subjects:   []rbacv1.Subject{subject},
		}
		if err := Create(ctx, "clusterrolebinding "+id.User, func(ctx context.Context) (any, error) {
			return cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
		}); err != nil {
			return err
		}
	}
	return nil
}

// Create makes an object with create (one API Create call) and
// succeeds if it exists afterwards: kubelab's objects are made once and
// left as they are, so one that already exists is no error. what names
// it in the error (e.g. "clusterrole x"):
//
//	err := Create(ctx, "configmap x", func(ctx context.Context) (any, error) {
//		return cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, opts)
//	})
//
// A request whose connection dropped before its answer (an EOF or a
// reset, through a load balancer while an apiserver starts) is sent
// again, a few times within ~1.5 s: if the first one was applied, the
// next finds the object there.
func Create(ctx context.Context, what string, create func(context.Context) (any, error)) error {
	err := retry.OnError(retry.DefaultBackoff, dropped, func() error {
		_, err := create(ctx)
		return err
	})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s: %w", what, err)
	}
	return nil
}

// dropped reports whether a request's connection was lost before its
// answer came.
func dropped(err error) bool { return utilnet.IsProbableEOF(err) || utilnet.IsConnectionReset(err) }
