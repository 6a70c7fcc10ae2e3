package load

import (
	"errors"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/expr-lang/expr/file"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/ops"
)

// Templates put bindings into operation arguments: "${before.leader}" in a
// string field (or an item of a list of strings) is replaced, when the
// operation runs, by the value of that binding path: a binding name, then
// fields and list indexes (`${out.json.items[0].metadata.name}`). Strings
// are inserted as they are, other values as expressions print them;
// `$${` is a literal `${` (for a shell's own `${VAR}`). Each template is
// type-checked at load time against the bindings recorded before it.
//
// A shell command (script.command) keeps the shell's own expansions:
// there a `${...}` that does not name a binding (`${HOME}`,
// `${p:-none}`) is left to the shell.
//
// Fields the loader compiles (expressions, regular expressions,
// manifests, patches, files) take no templates: expressions read bindings
// directly.

// noTemplate are the fields whose values are compiled at load time.
var noTemplate = map[string]bool{"expr": true, "until": true, "expectOutput": true, "expectError": true,
	"manifest": true, "file": true, "patch": true}

// shellFields are shell commands, where the shell's own ${VAR} stays.
var shellFields = map[string]bool{"command": true}

// templateRE matches one template or an escaped "$${".
var templateRE = regexp.MustCompile(`\$\$\{|\$\{([^}]*)\}`)

// bindingPathRE is what a template may contain: a binding, then fields
// and indexes.
var bindingPathRE = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\])*)\s*$`)

// hasTemplate tells whether s has a template or an escape to render.
func hasTemplate(s string) bool { return strings.Contains(s, "${") }

// templates parses and type-checks the templated strings of an
// operation's body (at p), keyed by their path relative to the body.
func (c *checker) templates(body any, p string) map[string]*ops.Template {
	out := map[string]*ops.Template{}
	ops.WalkStrings(body, func(field string, s string) {
		if !hasTemplate(s) {
			return
		}
		path := joinPath(p, field)
		if noTemplate[lastField(field)] {
			c.errorAt(path, "%s takes no ${...} templates: it is compiled when the lab is loaded (expressions read bindings directly)", lastField(field))
			return
		}
		if t := c.template(s, path, shellFields[lastField(field)]); t != nil {
			out[field] = t
		}
	})
	return out
}

// lastField is the last field name of a path, without an index.
func lastField(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		path = path[i+1:]
	}
	name, _, _ := strings.Cut(path, "[")
	return name
}

func (c *checker) template(s, path string, shell bool) *ops.Template {
	t := &ops.Template{}
	last, ok := 0, true
	for _, m := range templateRE.FindAllStringSubmatchIndex(s, -1) {
		t.Parts = append(t.Parts, ops.TemplatePart{Text: s[last:m[0]]})
		last = m[1]
		if s[m[0]:m[1]] == "$${" {
			t.Parts = append(t.Parts, ops.TemplatePart{Text: "${"})
			continue
		}
		inner := s[m[2]:m[3]]
		pm := bindingPathRE.FindStringSubmatch(inner)
		if shell && !c.bindingName(pm) {
			t.Parts = append(t.Parts, ops.TemplatePart{Text: s[m[0]:m[1]]}) // the shell's
			continue
		}
		if pm == nil {
			c.errorAt(path, "invalid template ${%s}: want ${NAME} or ${NAME.field...} with NAME a binding (write $${ for a literal ${)", inner)
			ok = false
			continue
		}
		name := pm[1]
		if _, bound := c.bindings[name]; !bound {
			switch at, later := c.recorded[name]; {
			case c.broken[name]:
			case later:
				c.errorAt(path, "template ${%s}: binding %q is used before it is recorded (at line %d)", inner, name, at.Line)
			default:
				c.errorAt(path, "template ${%s}: unknown binding %q%s (write $${ for a literal ${)", inner, name, suggest(name, boundNames(c.bindings)))
			}
			ok = false
			continue
		}
		if c.broken[name] {
			ok = false
			continue
		}
		comp, err := assertions.Compile(name+pm[2], c.bindings, false)
		if err != nil {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			if fe := (*file.Error)(nil); errors.As(err, &fe) {
				msg = c.hint(fe.Message)
			}
			c.errorAt(path, "template ${%s}: %s", inner, msg)
			ok = false
			continue
		}
		t.Parts = append(t.Parts, ops.TemplatePart{Path: comp})
	}
	if unclosed := strings.Index(strings.ReplaceAll(s[last:], "$${", ""), "${"); unclosed >= 0 && !shell {
		c.errorAt(path, "unterminated template %q: want ${NAME} (write $${ for a literal ${)", s[last:][unclosed:])
		return nil
	}
	t.Parts = append(t.Parts, ops.TemplatePart{Text: s[last:]})
	if !ok {
		return nil
	}
	return t
}

// bindingName tells whether a template's parsed binding path names a
// binding, recorded before or after it.
func (c *checker) bindingName(pm []string) bool {
	if pm == nil {
		return false
	}
	_, bound := c.bindings[pm[1]]
	_, later := c.recorded[pm[1]]
	return bound || later
}

func boundNames(b map[string]reflect.Type) []string {
	out := make([]string, 0, len(b))
	for n := range b {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
