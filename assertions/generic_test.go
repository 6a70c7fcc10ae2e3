package assertions

import (
	"context"
	"strings"
	"testing"
)

// nsView records the namespaces the helpers ask for; other lookups are
// not called.
type nsView struct {
	View
	asked []string
}

func (v *nsView) Deployment(_ context.Context, namespace, name string) (Deployment, error) {
	v.asked = append(v.asked, "deployment "+namespace+"/"+name)
	return Deployment{Name: name, Exists: true, Revision: 2, Images: []string{"kubelab/http:dev"}}, nil
}

func (v *nsView) Pods(_ context.Context, namespace, selector string) ([]Pod, error) {
	v.asked = append(v.asked, "pods "+namespace+" "+selector)
	return []Pod{{Name: "p", Annotations: map[string]string{"a": "b"}}}, nil
}

func (v *nsView) Get(_ context.Context, resource, namespace, name string) (map[string]any, error) {
	v.asked = append(v.asked, "get "+resource+" "+namespace+"/"+name)
	return map[string]any{"status": map[string]any{"currentHealthy": int64(2)}}, nil
}

func (v *nsView) List(_ context.Context, resource, namespace, selector string) ([]map[string]any, error) {
	v.asked = append(v.asked, "list "+resource+" "+namespace+" "+selector)
	return []map[string]any{{"metadata": map[string]any{"name": "a"}}}, nil
}

func (v *nsView) Can(_ context.Context, user, verb, resource, namespace string) (bool, error) {
	v.asked = append(v.asked, "can "+user+" "+verb+" "+resource+" "+namespace)
	return verb == "get", nil
}

func TestWiderEnvironment(t *testing.T) {
	for _, tc := range []struct {
		src   string
		asked string
	}{
		{`deployment("web").revision == 2`, "deployment default/web"},
		{`deployment("web", "team").images[0] == "kubelab/http:dev"`, "deployment team/web"},
		{`pods("app=web")[0].annotations.a == "b"`, "pods default app=web"},
		{`len(pods("app=web", "team")) == 1`, "pods team app=web"},
		{`get("poddisruptionbudgets", "web-pdb", "team").status.currentHealthy >= 1`, "get poddisruptionbudgets team/web-pdb"},
		{`list("configmaps", "app=web")[0].metadata.name == "a"`, "list configmaps default app=web"},
		{`can("system:serviceaccount:team:reader", "get", "pods", "team") && !can("u", "delete", "pods", "team")`, "can system:serviceaccount:team:reader get pods team"},
	} {
		c, err := Compile(tc.src, nil, true)
		if err != nil {
			t.Errorf("Compile(%s): %v", tc.src, err)
			continue
		}
		v := &nsView{}
		ok, err := Holds(context.Background(), c, v, nil)
		if !ok || err != nil {
			t.Errorf("%s = %v, %v; want true", tc.src, ok, err)
		}
		if len(v.asked) == 0 || v.asked[0] != tc.asked {
			t.Errorf("%s asked %q, want first %q", tc.src, v.asked, tc.asked)
		}
	}
	for _, src := range []string{`get("pdb", "x").spec != nil`, `can("u", "get", "pods", "") `} {
		c, err := Compile(src, nil, false)
		if err != nil || !c.Polls() {
			t.Errorf("%s: polls = %v, err %v; want a polled expression (nothing watches it)", src, c != nil && c.Polls(), err)
		}
	}
	for src, want := range map[string]string{
		`len(pods("a", "b", "c")) > 0`:       "pods takes at most 2 arguments",
		`get("pods", "x", "ns", "y") != nil`: "get takes at most 3 arguments",
		`can("u", "get", "pods")`:            "not enough arguments",
		`deployment("web", 3).ready > 0`:     "cannot use int",
	} {
		if _, err := Compile(src, nil, false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%s) = %v, want an error with %q", src, err, want)
		}
	}
}
