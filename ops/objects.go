package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Object is one Kubernetes object of a manifest.
type Object struct {
	// Content is the object as decoded from YAML (string keys).
	Content map[string]any
	// File is the lab file (inline manifest) or the manifest file.
	File string
	// Pos is where the object's document starts in File.
	Pos Pos
}

// ApplyObjects server-side-applies (or creates) the objects of a manifest;
// namespace is for namespaced objects that do not set one.
func ApplyObjects(ctx context.Context, env Env, objects []Object, namespace string, create bool) (string, error) {
	a, err := env.Clients()
	if err != nil {
		return "", err
	}
	var done []string
	for _, o := range objects {
		u := &unstructured.Unstructured{Object: o.Content}
		ns := u.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		ri, namespaced, err := a.resourceScoped(u.GetAPIVersion(), u.GetKind(), ns)
		if err != nil {
			return strings.Join(done, "\n"), fmt.Errorf("%s:%s: %w", o.File, o.Pos, err)
		}
		id := strings.ToLower(u.GetKind()) + "/" + u.GetName()
		if a.labels != nil {
			if u, err = a.owned(ctx, ri, u, namespaced && (ns == "" || ns == a.namespace) && a.ownsNamespace); err != nil {
				return strings.Join(done, "\n"), fmt.Errorf("%s %s (%s:%s): %w", map[bool]string{true: "create", false: "apply"}[create], id, o.File, o.Pos, err)
			}
		}
		if create {
			_, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager})
			done = append(done, id+" created")
		} else {
			var body []byte
			body, err = json.Marshal(u.Object)
			if err == nil {
				force := true
				_, err = ri.Patch(ctx, u.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
			}
			done = append(done, id+" applied")
		}
		if err != nil {
			return strings.Join(done[:len(done)-1], "\n"), fmt.Errorf("%s %s (%s:%s): %w", map[bool]string{true: "create", false: "apply"}[create], id, o.File, o.Pos, err)
		}
	}
	return strings.Join(done, "\n"), nil
}

// ManifestSummary names the objects of a manifest: "file: Kind/name, ...".
func ManifestSummary(file string, objs []Object) string {
	var names []string
	for _, o := range objs {
		kind, _ := o.Content["kind"].(string)
		meta, _ := o.Content["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		names = append(names, kind+"/"+name)
	}
	s := strings.Join(names, ", ")
	if file != "" {
		s = file + ": " + s
	}
	return s
}

// ErrNotOurs is returned when a lab on a shared cluster would change an
// object kubelab did not create.
var ErrNotOurs = errors.New("exists and was not created by this run: kubelab changes only what it created on a cluster it does not own")

// owned returns a copy of u carrying the run's labels. Outside the run's
// namespace (cluster-scoped objects, other namespaces) the object must not
// exist yet or must carry the run's labels already; so too in a run
// namespace the run does not own ("default" of an exercise): a run never takes
// over, and so never deletes, what someone else made.
func (a *Clients) owned(ctx context.Context, ri dynamic.ResourceInterface, u *unstructured.Unstructured, inRunNamespace bool) (*unstructured.Unstructured, error) {
	// A copy through JSON: objects parsed from YAML hold Go ints, which
	// Unstructured.DeepCopy refuses.
	b, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	u = &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range a.labels {
		l[k] = v
	}
	u.SetLabels(l)
	if inRunNamespace {
		return u, nil
	}
	cur, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return u, nil
	}
	if err != nil {
		return nil, fmt.Errorf("check owner: %w", err)
	}
	for k, v := range a.labels {
		if cur.GetLabels()[k] != v {
			return nil, ErrNotOurs
		}
	}
	return u, nil
}
