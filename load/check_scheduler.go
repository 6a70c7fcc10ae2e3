package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/internal/schedextender"
)

const (
	schedulerConfigPath = "spec.cluster.scheduler.config"
	extenderPath        = "spec.cluster.scheduler.extender"
)

// extender checks spec.cluster.scheduler.extender: its expressions
// against what the extender gives them (pod, node) and their type, and
// its weight.
func (c *checker) extender(e *cluster.ExtenderSpec) {
	if e == nil {
		return
	}
	if e.Filter == "" && e.Prioritize == "" {
		c.errorAt(extenderPath, "want filter (a boolean expression of pod and node), prioritize (an integer 0-10 of pod and node), or both")
	}
	env := "pod (name, namespace, labels, annotations) and node (name, labels, annotations, taints)"
	if e.Filter != "" {
		if _, err := schedextender.CompileFilter(e.Filter); err != nil {
			c.errorAt(extenderPath+".filter", "want a boolean expression of %s: %s", env, firstLine(err))
		}
	}
	if e.Prioritize != "" {
		if _, err := schedextender.CompilePrioritize(e.Prioritize); err != nil {
			c.errorAt(extenderPath+".prioritize", "want an integer expression (0-10) of %s: %s", env, firstLine(err))
		}
	}
	if e.Weight < 0 || e.Weight > 100 {
		c.errorAt(extenderPath+".weight", "want 1 to 100 (0: 1), found %d", e.Weight)
	}
}

// firstLine is an expression error's first line (expr adds the source
// and a caret), with the environment's Go types named as the expression
// names them.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return strings.NewReplacer("type schedextender.Node", "node", "type schedextender.Pod", "pod", "type schedextender.Taint", "a taint").Replace(s)
}

// schedulerConfig checks spec.cluster.scheduler.config before anything
// boots: its fields against the KubeSchedulerConfiguration v1 types, the
// fields kubelab owns, and every plugin name against kube-scheduler's
// in-tree plugins, each problem at its line and column.
func (c *checker) schedulerConfig(cfg map[string]any) {
	if cfg == nil {
		return
	}
	root := c.nodes[schedulerConfigPath]
	for _, f := range controlplane.SchedulerOwnedFields {
		if _, ok := cfg[f]; ok {
			c.errorAtNode(mappingKey(root, f), schedulerConfigPath+"."+f, "kubelab sets %s itself (it connects every scheduler and runs leader election); remove it", f)
		}
	}
	for k, want := range map[string]string{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"} {
		if v, ok := cfg[k]; ok && v != want {
			c.errorAtNode(mappingValue(root, k), schedulerConfigPath+"."+k, "want %q, found %q", want, v)
		}
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		c.errorAt(schedulerConfigPath, "%v", err)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var typed configv1.KubeSchedulerConfiguration
	if err := dec.Decode(&typed); err != nil {
		c.errorAt(schedulerConfigPath, "not a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): %s",
			strings.TrimPrefix(err.Error(), "json: "))
		return
	}
	c.pluginNames(root)
}

// pluginNames reports every unknown plugin name of the profiles.
func (c *checker) pluginNames(root *yaml.Node) {
	known := controlplane.SchedulerPluginNames()
	check := func(n *yaml.Node, path string, star bool) {
		if n == nil || n.Value == "" || slices.Contains(known, n.Value) || star && n.Value == "*" {
			return
		}
		c.errorAtNode(n, path, "unknown scheduler plugin %q: kube-scheduler's in-tree plugins are %s%s",
			n.Value, strings.Join(known, ", "), suggest(n.Value, known))
	}
	profiles := mappingValue(root, "profiles")
	for i, p := range seqItems(profiles) {
		pp := fmt.Sprintf("%s.profiles[%d]", schedulerConfigPath, i)
		plugins := mappingValue(p, "plugins")
		for j := 0; plugins != nil && j+1 < len(plugins.Content); j += 2 {
			point := plugins.Content[j].Value
			for _, list := range []string{"enabled", "disabled"} {
				for k, item := range seqItems(mappingValue(plugins.Content[j+1], list)) {
					check(mappingValue(item, "name"), fmt.Sprintf("%s.plugins.%s.%s[%d].name", pp, point, list, k), list == "disabled")
				}
			}
		}
		for k, item := range seqItems(mappingValue(p, "pluginConfig")) {
			check(mappingValue(item, "name"), fmt.Sprintf("%s.pluginConfig[%d].name", pp, k), false)
		}
	}
}

// mappingKey is the key node of key in mapping m, or nil.
func mappingKey(m *yaml.Node, key string) *yaml.Node {
	k, _ := mappingPair(m, key)
	return k
}

// errorAtNode reports a problem at n, or at path's closest decoded node.
func (c *checker) errorAtNode(n *yaml.Node, path, format string, args ...any) {
	if n == nil {
		c.errorAt(path, format, args...)
		return
	}
	c.probs.add(c.file, nodePos(n), path, format, args...)
}

func seqItems(n *yaml.Node) []*yaml.Node {
	if n == nil {
		return nil
	}
	if n = deref(n); n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}
