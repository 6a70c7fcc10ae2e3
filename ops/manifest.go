package ops

import (
	"context"
	"regexp"
	"time"
)

func init() {
	const example = "manifest: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n"
	Register("apply", example, func(m *ManifestOp) Op { return manifestOp{m, false} })
	Register("create", example, func(m *ManifestOp) Op { return manifestOp{m, true} })
}

// ManifestOp applies or creates objects, given by exactly one of file and
// manifest.
type ManifestOp struct {
	File        string `yaml:"file,omitempty"`
	Manifest    string `yaml:"manifest,omitempty"`
	Namespace   string `yaml:"namespace,omitempty"`
	ExpectError string `yaml:"expectError,omitempty"`

	objects     []Object
	expectError *regexp.Regexp
}

// Objects returns the objects of the file or manifest, parsed at load time.
func (m *ManifestOp) Objects() []Object { return m.objects }

// NewManifestOp is the body of an apply or create of objects parsed
// elsewhere (load.ParseManifest), e.g. a graded submission's, with namespace
// for the namespaced objects that set none.
func NewManifestOp(namespace string, objs ...Object) *ManifestOp {
	return &ManifestOp{Namespace: namespace, objects: objs}
}

// manifestOp server-side-applies the objects (apply) or creates them,
// failing if one exists (create).
type manifestOp struct {
	m      *ManifestOp
	create bool
}

func (o manifestOp) verb() string {
	if o.create {
		return "create"
	}
	return "apply"
}

func (o manifestOp) Summary() string {
	return o.verb() + " " + ManifestSummary(o.m.File, o.m.Objects())
}

func (o manifestOp) DefaultTimeout() time.Duration { return 30 * time.Second }

func (o manifestOp) Validate(c Checker) {
	o.m.objects = c.Objects(o.m.File, o.m.Manifest, "")
	o.m.expectError = c.Regexp(o.m.ExpectError, "expectError")
}

func (o manifestOp) Exec(ctx context.Context, env Env) (string, error) {
	out, err := ApplyObjects(ctx, env, o.m.Objects(), o.m.Namespace, o.create)
	if o.m.expectError != nil {
		return ExpectRefusal(o.Summary(), out, err, o.m.expectError)
	}
	return out, err
}
