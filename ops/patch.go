package ops

import (
	"context"
	"fmt"
	"regexp"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	yamlv3 "gopkg.in/yaml.v3"
)

func init() {
	Register("patch", "{kind: Deployment, name: web, patch: '{spec: {replicas: 2}}'}", func(p *PatchOp) Op { return p })
}

// PatchOp patches one object.
type PatchOp struct {
	Kind        string `yaml:"kind"`
	Name        string `yaml:"name"`
	Namespace   string `yaml:"namespace,omitempty"`
	Type        string `yaml:"type,omitempty"`
	Patch       string `yaml:"patch"`
	ExpectError string `yaml:"expectError,omitempty"`

	expectError *regexp.Regexp
}

// Summary names the object.
func (p *PatchOp) Summary() string { return fmt.Sprintf("patch %s/%s", p.Kind, p.Name) }

// DefaultTimeout is that of an API write.
func (p *PatchOp) DefaultTimeout() time.Duration { return writeTimeout }

// Validate defaults the type and checks the patch document's shape.
func (p *PatchOp) Validate(c Checker) {
	p.expectError = c.Regexp(p.ExpectError, "expectError")
	names := []string{"merge", "strategic", "json"}
	switch p.Type {
	case "":
		p.Type = "strategic"
	case "merge", "strategic", "json":
	default:
		c.Errorf("type", "invalid patch type %q: want merge, strategic or json%s", p.Type, c.Suggest(p.Type, names))
		return
	}
	if p.Patch == "" {
		return
	}
	doc := c.YAML(p.Patch, "patch", "patch")
	if doc == nil {
		return
	}
	expected, kind := "a mapping", yamlv3.MappingNode
	if p.Type == "json" {
		expected, kind = "a list of operations", yamlv3.SequenceNode
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != kind {
		found := "nothing"
		if len(doc.Content) > 0 {
			found = c.Describe(doc.Content[0])
		}
		c.Errorf("patch", "a %s patch must be %s, found %s", p.Type, expected, found)
	}
}

// Exec patches the object.
func (p *PatchOp) Exec(ctx context.Context, env Env) (string, error) {
	out, err := p.exec(ctx, env)
	if p.expectError != nil {
		return ExpectRefusal(p.Summary(), out, err, p.expectError)
	}
	return out, err
}

func (p *PatchOp) exec(ctx context.Context, env Env) (string, error) {
	a, err := env.Clients()
	if err != nil {
		return "", err
	}
	ri, err := a.resource("", p.Kind, p.Namespace)
	if err != nil {
		return "", err
	}
	body, err := yaml.YAMLToJSON([]byte(p.Patch))
	if err != nil {
		return "", fmt.Errorf("patch body: %w", err)
	}
	pt := map[string]types.PatchType{"merge": types.MergePatchType, "json": types.JSONPatchType, "strategic": types.StrategicMergePatchType, "": types.StrategicMergePatchType}[p.Type]
	if _, err := ri.Patch(ctx, p.Name, pt, body, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
		return "", fmt.Errorf("patch %s/%s: %w", p.Kind, p.Name, err)
	}
	return "", nil
}
