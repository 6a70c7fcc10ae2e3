package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func init() {
	Register("label", "{name: worker-1, labels: {zone: a, old: null}}", func(l *LabelOp) Op { return l })
}

// LabelOp sets or removes labels of an object.
type LabelOp struct {
	Kind      string             `yaml:"kind,omitempty"`
	Name      string             `yaml:"name"`
	Namespace string             `yaml:"namespace,omitempty"`
	Labels    map[string]*string `yaml:"labels"`
}

// Summary names the object.
func (l *LabelOp) Summary() string { return fmt.Sprintf("label %s %s", l.Kind, l.Name) }

// DefaultTimeout is that of an API write.
func (l *LabelOp) DefaultTimeout() time.Duration { return writeTimeout }

// Validate defaults the kind to Node and checks a node's name.
func (l *LabelOp) Validate(c Checker) {
	if l.Kind == "" {
		l.Kind = "Node"
	}
	if l.Labels != nil && len(l.Labels) == 0 {
		c.Errorf("labels", "want at least one label")
	}
	if l.Kind == "Node" {
		c.Node(l.Name, "name")
	}
}

// Exec merge-patches the labels.
func (l *LabelOp) Exec(ctx context.Context, env Env) (string, error) {
	a, err := env.Clients()
	if err != nil {
		return "", err
	}
	kind := l.Kind
	if kind == "" {
		kind = "Node"
	}
	ri, err := a.resource("", kind, l.Namespace)
	if err != nil {
		return "", err
	}
	labels := map[string]any{}
	for k, v := range l.Labels {
		if v == nil {
			labels[k] = nil
		} else {
			labels[k] = *v
		}
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if _, err := ri.Patch(ctx, l.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
		return "", fmt.Errorf("label %s %s: %w", kind, l.Name, err)
	}
	return "", nil
}
