package features

import (
	"context"
	"fmt"

	"github.com/cucumber/godog"

	"kubelab.dev/kubelab/ops"
)

// objectsSteps are the step library's phrases of the group Objects.
func objectsSteps() []Step {
	return []Step{
		{
			Group: "Objects", Keyword: "When", Phrase: "I apply:",
			Doc:       "apply: server-side applies the objects of the docstring (several YAML documents allowed; namespace default).",
			Examples:  []string{"When I apply:"},
			DocString: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {greeting: hi}",
			re:        `^I apply:$`,
			fn: func(ctx context.Context, doc *godog.DocString) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{Apply: &ops.ManifestOp{Manifest: doc.Content}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: "I create:",
			Doc:       "create: creates the objects of the docstring; fails if one exists.",
			Examples:  []string{"When I create:"},
			DocString: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: once}",
			re:        `^I create:$`,
			fn: func(ctx context.Context, doc *godog.DocString) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{Create: &ops.ManifestOp{Manifest: doc.Content}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: `I apply the file "PATH"`,
			Doc:      "apply: the objects of a YAML file, relative to the feature file.",
			Examples: []string{`When I apply the file "manifests/web.yaml"`},
			re:       `^I apply the file ` + quoted + `$`,
			fn: func(ctx context.Context, path string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{Apply: &ops.ManifestOp{File: unquote(path)}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: `I delete KIND "NAME"`,
			Doc:      "delete: one object by kind and name (namespace default).",
			Examples: []string{`When I delete configmap "hello"`, `When I delete Deployment "web"`},
			re:       `^I delete ([A-Za-z][A-Za-z0-9.]*) ` + quoted + `$`,
			fn: func(ctx context.Context, kind, name string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{Delete: &ops.DeleteOp{Kind: kind, Name: unquote(name)}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: `I delete the pods labelled "SELECTOR"`,
			Doc:      "delete: every pod matching a label selector (namespace default).",
			Examples: []string{`When I delete the pods labelled "app=web"`},
			re:       `^I delete the pods labelled ` + quoted + `$`,
			fn: func(ctx context.Context, sel string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{Delete: &ops.DeleteOp{Kind: "Pod", Selector: unquote(sel)}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: `I scale deployment "NAME" to N replicas`,
			Doc:      "patch: a merge patch of spec.replicas. It only writes the desired state; controllers do the rest.",
			Examples: []string{`When I scale deployment "web" to 5 replicas`},
			re:       `^I scale deployment ` + quoted + ` to (\d+) replicas?$`,
			fn: func(ctx context.Context, name, n string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{Patch: &ops.PatchOp{Kind: "Deployment", Name: unquote(name), Type: "merge",
					Patch: fmt.Sprintf(`{"spec": {"replicas": %s}}`, n)}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: `I patch KIND "NAME" with:`,
			Doc:       "patch: a merge patch given as the docstring (YAML or JSON).",
			Examples:  []string{`When I patch configmap "hello" with:`},
			DocString: "data: {greeting: hello}",
			re:        `^I patch ([A-Za-z][A-Za-z0-9.]*) ` + quoted + ` with:$`,
			fn: func(ctx context.Context, kind, name string, doc *godog.DocString) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{Patch: &ops.PatchOp{Kind: kind, Name: unquote(name), Type: "merge", Patch: doc.Content}})
				return err
			},
		},
	}
}
