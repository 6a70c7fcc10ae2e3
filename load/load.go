package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/ops"
)

// ReadLab reads the lab file at path and checks it; see ParseLab.
func ReadLab(path string) (*Lab, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load lab: %w", err)
	}
	return ParseLab(path, data)
}

// ParseLab decodes and checks the content of a lab file. path names the
// file in problems, and relative manifest files are looked up next to it.
//
// On success the lab has its defaults filled in: spec.timeout (10m), the
// cluster topology's defaults, every operation's timeout (ops.DefaultTimeout),
// patch.type (strategic), label.kind (Node); every expression is compiled
// (ops.Operation.Compiled) and every manifest parsed (ops.ManifestOp.Objects).
// Otherwise the error is a *Problems listing everything wrong.
func ParseLab(path string, data []byte) (*Lab, error) {
	return parseLab(path, data, nil)
}

// parseLab is ParseLab with bindings already recorded (for single
// operations checked against a running session).
func parseLab(path string, data []byte, bindings map[string]reflect.Type) (*Lab, error) {
	var wire v1alpha1.Lab
	doc, err := DecodeDocument(path, data, v1alpha1.KindLab, &wire)
	if doc == nil {
		return nil, err
	}
	lab := &Lab{}
	Convert(lab, &wire)
	for k, t := range bindings {
		doc.c.bindings[k] = t
	}
	doc.c.check(lab)
	if err := doc.Err(); err != nil {
		return nil, err
	}
	return lab, nil
}

// parse returns the root mapping of the single YAML document in data, a
// file of the given kind (Lab...), or nil after reporting why there is
// none.
func parse(path string, data []byte, kind string, probs *Problems) *yaml.Node {
	start := ops.Pos{Line: 1, Column: 1}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := dec.Decode(&doc)
	switch {
	case errors.Is(err, io.EOF) || err == nil && (len(doc.Content) == 0 || isNull(doc.Content[0])):
		probs.add(path, start, "", "empty file: want %s (apiVersion: %s, kind: %s)", kindNoun(kind), v1alpha1.APIVersion, kind)
		return nil
	case err != nil:
		probs.add(path, yamlErrorPos(data, err), "", "invalid YAML: %s", yamlErrorMsg(err))
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		probs.add(path, nodePos(root), "", "wrong type: want %s (a mapping), found %s", kindNoun(kind), describeNode(root))
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil && len(extra.Content) > 0 && !isNull(extra.Content[0]):
		probs.add(path, nodePos(extra.Content[0]), "", "want a single YAML document, found another one")
	case err != nil && !errors.Is(err, io.EOF):
		probs.add(path, yamlErrorPos(data, err), "", "invalid YAML: %s", yamlErrorMsg(err))
	}
	return root
}

// kindNoun names a document of a kind in messages: "a lab", "an exercise".
func kindNoun(kind string) string {
	noun := strings.ToLower(kind)
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

func yamlErrorMsg(err error) string {
	_, msg := yamlError(err)
	return msg
}

// yamlErrorPos is where a YAML syntax error is. The library reports only a
// line, and for a tab in the indentation the line where the enclosing
// block started (one or more lines early): there, point at the first tab
// in the indentation of a line from that one on, which is what the user
// must fix.
func yamlErrorPos(data []byte, err error) ops.Pos {
	line, msg := yamlError(err)
	last := line // "cannot start any token" is reported on its own line
	switch {
	case strings.Contains(msg, "tab character"):
		last = math.MaxInt
	case !strings.Contains(msg, "cannot start any token"):
		return ops.Pos{Line: line, Column: 1}
	}
	lines := strings.Split(string(data), "\n")
	for i := line - 1; i >= 0 && i < len(lines) && i < last; i++ {
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " \t"))
		if col := strings.IndexByte(lines[i][:indent], '\t'); col >= 0 {
			return ops.Pos{Line: i + 1, Column: col + 1}
		}
	}
	return ops.Pos{Line: line, Column: 1}
}
