package lifecycle

import (
	"context"
	"errors"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createControllerAccounts creates names, the controller-manager's
// ServiceAccounts recorded with the seed (see seed.Cache.ControllerAccounts),
// while the controller-manager starts: it then finds each one made, as it
// does at every restart, instead of making them one by one before its
// first controller runs. One that exists is left alone; a failure only costs
// the time it would have saved (the controller-manager makes what is
// missing), so it is reported, not fatal.
func (b *boot) createControllerAccounts(ctx context.Context, names []string) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, n := range names {
		g.Go(func() error {
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: n}}
			_, err := b.cs.CoreV1().ServiceAccounts(metav1.NamespaceSystem).Create(gctx, sa, metav1.CreateOptions{FieldManager: "kubelab"})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.say("cluster", "could not create the controller-manager's ServiceAccounts ahead of it (it makes them itself): %v", err)
		return
	}
	b.say("cluster", "created the controller-manager's %d ServiceAccounts, recorded with the seed", len(names))
}

// recordControllerAccounts records, next to the seed this boot took or
// restored without them, the ServiceAccounts of kube-system the
// controller-manager made: the cluster is usable, so it has made every one
// (the default ServiceAccount's controller starts after them). They are
// those that exist and that a system:controller:NAME ClusterRoleBinding of
// RBAC's bootstrap policy binds: the policy also binds the accounts of
// controllers that do not run here (cloud, disabled by default), which
// the controller-manager does not make, and the cluster has accounts of
// its own (the DNS addon's), which it does not make either.
func (b *boot) recordControllerAccounts(ctx context.Context) {
	names, err := b.controllerAccounts(ctx)
	if err == nil && len(names) == 0 {
		err = errors.New("none found")
	}
	if err == nil {
		err = b.opts.Seeds.PutControllerAccounts(b.opts.SeedKey, names)
	}
	if err != nil {
		b.say("etcd", "could not record the controller-manager's ServiceAccounts with the seed: %v", err)
		return
	}
	b.say("etcd", "recorded the controller-manager's %d ServiceAccounts with seed %s", len(names), b.opts.SeedKey)
}

// controllerAccounts lists the ServiceAccounts of kube-system bound by a
// system:controller:NAME ClusterRoleBinding.
func (b *boot) controllerAccounts(ctx context.Context) ([]string, error) {
	crbs, err := b.cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	bound := map[string]bool{}
	for _, crb := range crbs.Items {
		if !strings.HasPrefix(crb.Name, "system:controller:") {
			continue
		}
		for _, s := range crb.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == metav1.NamespaceSystem {
				bound[s.Name] = true
			}
		}
	}
	sas, err := b.cs.CoreV1().ServiceAccounts(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, sa := range sas.Items {
		if bound[sa.Name] {
			names = append(names, sa.Name)
		}
	}
	return names, nil
}
