package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
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
		ri, err := a.resource(u.GetAPIVersion(), u.GetKind(), ns)
		if err != nil {
			return strings.Join(done, "\n"), fmt.Errorf("%s:%s: %w", o.File, o.Pos, err)
		}
		id := strings.ToLower(u.GetKind()) + "/" + u.GetName()
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
