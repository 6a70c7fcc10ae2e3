// Package schedrecord makes the real kube-scheduler show its work: with
// the upstream out-of-tree plugin mechanism (app.WithPlugin), every in-tree
// Filter and Score plugin of every profile is replaced, at those two
// extension points only, by a wrapper that calls the in-tree plugin and
// writes down what it returned (filter status and reason per node, raw and
// normalized score per node), and a recorder plugin writes one
// observe.Decision per scheduling cycle with the selected node. The
// scheduler still decides: same plugins, same order, same weights, same
// arguments; the wrapped plugins keep every other extension point
// (PreFilter, PreScore, Reserve...) under their own names.
//
// Two side effects, both on speed only: opportunistic batching is off
// (the wrappers do not sign pods, so every pod gets a full cycle to
// record), and a pod that a wrapper rejected is retried on any cluster
// event its plugin registers for, as before.
//
// It imports the scheduler's plugins, so only the kube-scheduler
// component imports it.
package schedrecord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/internal/schedextender"
)

// recorderName is the plugin that starts and ends each cycle's record.
const recorderName = "kubelab.dev/Decisions"

// wrapped is the name of the recording wrapper of in-tree plugin name.
func wrapped(name string) string { return "kubelab.dev/" + name }

// recorderArgs is what the recorder of one profile knows about it.
type recorderArgs struct {
	Profile string           `json:"profile"`
	Filters []string         `json:"filters"`
	Weights map[string]int64 `json:"weights"`
}

// Rewrite reads the KubeSchedulerConfiguration at in with upstream's own
// decoder and defaults (so the default plugin set and weights are those of
// this Kubernetes version), replaces the Filter and Score plugins of every
// profile by their recording wrappers, and writes the result to out. The
// extender ext (nil: none) runs after every Filter plugin and scores with
// its weight: the recorder lists it among them as schedextender.Name.
func Rewrite(in, out string, ext *schedextender.Extender) error {
	cfg, err := options.LoadConfigFromFile(klog.Background(), in)
	if err != nil {
		return fmt.Errorf("load scheduler config %s: %w", in, err)
	}
	for i := range cfg.Profiles {
		if err := wrapProfile(&cfg.Profiles[i], ext); err != nil {
			return fmt.Errorf("profile %s: %w", cfg.Profiles[i].SchedulerName, err)
		}
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeYAML)
	if !ok {
		return fmt.Errorf("no YAML serializer for scheduler config")
	}
	var buf bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(info.Serializer, configv1.SchemeGroupVersion).Encode(cfg, &buf); err != nil {
		return fmt.Errorf("encode scheduler config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

func wrapProfile(p *config.KubeSchedulerProfile, ext *schedextender.Extender) error {
	if p.Plugins == nil {
		return fmt.Errorf("no plugins after defaulting")
	}
	multi := p.Plugins.MultiPoint.Enabled
	recorded := func(n string) bool { return !controlplane.SchedulerPlugins[n].Unrecorded }
	isFilter := func(n string) bool { return controlplane.SchedulerPlugins[n].Filter && recorded(n) }
	isScore := func(n string) bool { return controlplane.SchedulerPlugins[n].Score && recorded(n) }
	var filters, scores []config.Plugin
	p.Plugins.Filter, filters = wrapPoint(p.Plugins.Filter, multi, isFilter)
	p.Plugins.Score, scores = wrapPoint(p.Plugins.Score, multi, isScore)
	args := recorderArgs{Profile: p.SchedulerName, Weights: map[string]int64{}}
	for _, f := range filters {
		args.Filters = append(args.Filters, f.Name)
	}
	for _, s := range scores {
		args.Weights[s.Name] = int64(s.Weight)
	}
	if ext != nil && ext.Filters() {
		args.Filters = append(args.Filters, schedextender.Name)
	}
	if ext != nil && ext.Prioritizes() {
		args.Weights[schedextender.Name] = ext.Weight()
	}
	// Each wrapper gets the arguments of the plugin it wraps.
	for _, n := range unique(append(slices.Clone(args.Filters), slices.Collect(maps.Keys(args.Weights))...)) {
		for _, pc := range p.PluginConfig {
			if pc.Name == n {
				p.PluginConfig = append(p.PluginConfig, config.PluginConfig{Name: wrapped(n), Args: pc.Args})
				break
			}
		}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	p.PluginConfig = append(p.PluginConfig, config.PluginConfig{Name: recorderName,
		Args: &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}})
	rec := config.Plugin{Name: recorderName}
	p.Plugins.PreFilter.Enabled = append([]config.Plugin{rec}, p.Plugins.PreFilter.Enabled...)
	p.Plugins.PostFilter.Enabled = append(p.Plugins.PostFilter.Enabled, rec)
	p.Plugins.PostBind.Enabled = append(p.Plugins.PostBind.Enabled, rec)
	return nil
}

// wrapPoint replaces, at one extension point, the in-tree plugins that
// implement it (is) by their wrappers, in the order the framework would
// run the originals: plugins both explicit and in MultiPoint first (in
// explicit order), then the other MultiPoint ones, then the other
// explicit ones. The originals are disabled at this point only. It
// returns the new set and the wrapped plugins (original names, weights
// defaulted to 1 as the framework does).
func wrapPoint(set config.PluginSet, multi []config.Plugin, is func(string) bool) (config.PluginSet, []config.Plugin) {
	disabled := map[string]bool{}
	for _, d := range set.Disabled {
		disabled[d.Name] = true
	}
	explicit, inMulti := map[string]bool{}, map[string]bool{}
	for _, e := range set.Enabled {
		explicit[e.Name] = true
	}
	for _, m := range multi {
		inMulti[m.Name] = true
	}
	var order []config.Plugin
	for _, e := range set.Enabled {
		if inMulti[e.Name] {
			order = append(order, e)
		}
	}
	if !disabled["*"] {
		for _, m := range multi {
			if !explicit[m.Name] && !disabled[m.Name] && is(m.Name) {
				order = append(order, m)
			}
		}
	}
	for _, e := range set.Enabled {
		if !inMulti[e.Name] {
			order = append(order, e)
		}
	}
	out := config.PluginSet{Disabled: slices.Clone(set.Disabled)}
	var done []config.Plugin
	for _, pl := range order {
		if !is(pl.Name) {
			out.Enabled = append(out.Enabled, pl)
			continue
		}
		w := max(pl.Weight, 1)
		out.Enabled = append(out.Enabled, config.Plugin{Name: wrapped(pl.Name), Weight: w})
		out.Disabled = append(out.Disabled, config.Plugin{Name: pl.Name})
		done = append(done, config.Plugin{Name: pl.Name, Weight: w})
	}
	return out, done
}

func unique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
