package ops

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

func init() {
	Register("delete", "{kind: Pod, selector: app=web, wait: true}", func(d *DeleteOp) Op { return d })
}

// DeleteOp deletes objects: kind and name, kind and selector, or the objects
// of a file or manifest.
type DeleteOp struct {
	Kind        string `yaml:"kind,omitempty"`
	Name        string `yaml:"name,omitempty"`
	Namespace   string `yaml:"namespace,omitempty"`
	Selector    string `yaml:"selector,omitempty"`
	File        string `yaml:"file,omitempty"`
	Manifest    string `yaml:"manifest,omitempty"`
	Wait        bool   `yaml:"wait,omitempty"`
	ExpectError string `yaml:"expectError,omitempty"`

	objects     []Object
	expectError *regexp.Regexp
}

// Objects returns the objects of the file or manifest, parsed at load time
// (nil for kind and name or selector).
func (d *DeleteOp) Objects() []Object { return d.objects }

// Summary names the objects.
func (d *DeleteOp) Summary() string {
	if d.Name != "" || d.Selector != "" {
		return fmt.Sprintf("delete %s %s%s", d.Kind, d.Name, d.Selector)
	}
	return "delete " + ManifestSummary(d.File, d.Objects())
}

// DefaultTimeout is that of an API write.
func (d *DeleteOp) DefaultTimeout() time.Duration { return writeTimeout }

// Validate checks that exactly one way of naming the objects is used.
func (d *DeleteOp) Validate(c Checker) {
	d.expectError = c.Regexp(d.ExpectError, "expectError")
	byRef := d.Kind != "" || d.Name != "" || d.Selector != ""
	switch {
	case byRef && (d.File != "" || d.Manifest != ""):
		c.Errorf("", "set kind with name or selector, or file or manifest, not both")
	case !byRef:
		d.objects = c.Objects(d.File, d.Manifest, "")
	case d.Kind == "":
		c.Errorf("", "missing kind: want kind with name or selector")
	case d.Name != "" && d.Selector != "":
		c.Errorf("", "set name or selector, not both")
	case d.Name == "" && d.Selector == "":
		c.Errorf("", "want name or selector with kind %q", d.Kind)
	}
}

type deleteTarget struct {
	ri   dynamic.ResourceInterface
	name string
}

// Exec deletes the objects (a missing one counts as deleted, except with
// expectError, where "not found" is a refusal like any other) and, with
// wait, waits until they are gone.
func (d *DeleteOp) Exec(ctx context.Context, env Env) (string, error) {
	out, err := d.exec(ctx, env)
	if d.expectError != nil {
		return ExpectRefusal(d.Summary(), out, err, d.expectError)
	}
	return out, err
}

func (d *DeleteOp) exec(ctx context.Context, env Env) (string, error) {
	targets, err := d.targets(ctx, env)
	if err != nil {
		return "", err
	}
	var out []string
	for _, t := range targets {
		if err := t.ri.Delete(ctx, t.name, metav1.DeleteOptions{}); err != nil && (d.expectError != nil || !apierrors.IsNotFound(err)) {
			return strings.Join(out, "\n"), fmt.Errorf("delete %s: %w", t.name, err)
		}
		out = append(out, t.name+" deleted")
	}
	if d.Wait {
		for _, t := range targets {
			for {
				_, err := t.ri.Get(ctx, t.name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					break
				}
				if err := Sleep(ctx, 100*time.Millisecond); err != nil {
					return strings.Join(out, "\n"), fmt.Errorf("waiting for %s to be gone: %w", t.name, err)
				}
			}
		}
	}
	return strings.Join(out, "\n"), nil
}

// targets resolves the objects to delete.
func (d *DeleteOp) targets(ctx context.Context, env Env) ([]deleteTarget, error) {
	a, err := env.Clients()
	if err != nil {
		return nil, err
	}
	var targets []deleteTarget
	if objs := d.Objects(); len(objs) > 0 {
		for _, o := range objs {
			u := &unstructured.Unstructured{Object: o.Content}
			ns := u.GetNamespace()
			if ns == "" {
				ns = d.Namespace
			}
			ri, err := a.resource(u.GetAPIVersion(), u.GetKind(), ns)
			if err != nil {
				return nil, err
			}
			targets = append(targets, deleteTarget{ri, u.GetName()})
		}
		return targets, nil
	}
	ri, err := a.resource("", d.Kind, d.Namespace)
	if err != nil {
		return nil, err
	}
	if d.Name != "" {
		return []deleteTarget{{ri, d.Name}}, nil
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: d.Selector})
	if err != nil {
		return nil, fmt.Errorf("list %s %s: %w", d.Kind, d.Selector, err)
	}
	for _, it := range list.Items {
		targets = append(targets, deleteTarget{ri, it.GetName()})
	}
	return targets, nil
}
