package app

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"kubelab.dev/kubelab/internal/binaries"
)

// Version is what `kubelab version` reports: kubelab's own version and
// commit, and the versions of the upstream components it carries, all
// read from the binary's build information.
type Version struct {
	Kubelab  string `json:"kubelab"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	// Components maps a component to its upstream version.
	Components []ComponentVersion `json:"components"`
}

// ComponentVersion is the upstream version of a component kubelab carries.
type ComponentVersion struct {
	Name    string `json:"name"`
	Module  string `json:"module"`
	Version string `json:"version"`
}

// componentModules are the modules whose versions are the components'.
// A component with a binary is not linked into kubelab: its version is
// read from that binary, next to kubelab (kubelab-components carries the
// upstream components, kubelab-coredns is the image of the DNS addon's
// pods).
var componentModules = []struct{ name, module, binary string }{
	{"Kubernetes", "k8s.io/kubernetes", binaries.Components},
	{"etcd", "go.etcd.io/etcd/server/v3", binaries.Components},
	{"kwok", "sigs.k8s.io/kwok", binaries.Components},
	{"CoreDNS", "github.com/coredns/coredns", "kubelab-coredns"},
}

// versionOf reads a Version from build information (nil: unknown) and
// that of the binaries next to kubelab (by name; nil or missing: not
// built).
func versionOf(bi *debug.BuildInfo, binaries map[string]*debug.BuildInfo) Version {
	v := Version{Kubelab: "(unknown)", Go: "(unknown)"}
	if bi == nil {
		return v
	}
	v.Go = bi.GoVersion
	if bi.Main.Version != "" {
		v.Kubelab = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	for _, c := range componentModules {
		ver := depVersion(bi, c.module)
		if c.binary != "" {
			ver = depVersion(binaries[c.binary], c.module)
		}
		switch {
		case ver != "":
		case c.binary != "":
			ver = "(" + c.binary + " not built)"
		default:
			ver = "(not linked)"
		}
		v.Components = append(v.Components, ComponentVersion{Name: c.name, Module: c.module, Version: ver})
	}
	return v
}

// depVersion is the version of module in bi ("" when absent).
func depVersion(bi *debug.BuildInfo, module string) string {
	if bi == nil {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == module {
			if d.Replace != nil && d.Replace.Version != "" {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

func buildVersion() Version {
	bi, _ := debug.ReadBuildInfo()
	infos := map[string]*debug.BuildInfo{}
	if self, err := os.Executable(); err == nil {
		for _, c := range componentModules {
			if _, done := infos[c.binary]; c.binary != "" && !done {
				info, _ := buildinfo.ReadFile(filepath.Join(filepath.Dir(self), c.binary))
				infos[c.binary] = info // nil: not built
			}
		}
	}
	return versionOf(bi, infos)
}

// Line is the one-line version: "kubelab VERSION (commit C)".
func (v Version) Line() string {
	s := "kubelab " + v.Kubelab
	if v.Commit != "" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if v.Modified {
			c += ", modified"
		}
		s += " (commit " + c + ")"
	}
	return s
}

// versionLine is --version's line; it names no component, so it reads
// only kubelab's own build information.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi, nil).Line()
}

func (v Version) write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	commit := v.Commit
	if commit == "" {
		commit = "(unknown)"
	} else if v.Modified {
		commit += " (modified)"
	}
	fmt.Fprintf(tw, "kubelab:\t%s\ncommit:\t%s\nGo:\t%s\n", v.Kubelab, commit, v.Go)
	for _, c := range v.Components {
		fmt.Fprintf(tw, "%s:\t%s\n", c.Name, c.Version)
	}
	return tw.Flush()
}

func newVersionCommand(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print kubelab's version and commit, and the versions of the components it carries",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion()
			return printAs(g.streams.Out, output, v, v.write)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// addOutputFlag adds -o/--output (table, json or yaml).
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "", "output format: json or yaml (default: a table)")
}

// printAs writes v as JSON or YAML, or with table when format is "".
func printAs(w io.Writer, format string, v any, table func(io.Writer) error) error {
	switch format {
	case "", "table", "wide":
		return table(w)
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return invalidf("--output %q: want json or yaml", format)
}
