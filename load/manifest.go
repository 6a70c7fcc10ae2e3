package load

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/ops"
)

// MaxManifestSize bounds a manifest file, in bytes: a lab's, or one of a
// graded submission's.
const MaxManifestSize = 8 << 20

// ParseManifest parses the Kubernetes objects of a manifest file (several
// YAML documents allowed) with the checks a lab's manifest files get:
// every document a mapping with apiVersion, kind and metadata.name. file
// names the file in the objects and in the problems, which are positioned
// in data and in the order found; a file of comments only is the problem
// "no objects: ...".
func ParseManifest(file string, data []byte) ([]ops.Object, []Problem) {
	probs := &Problems{}
	c := newChecker(newDecoder(file, probs), filepath.Dir(file), data)
	objs := c.parseObjects(data, "", file, func(line, col int) ops.Pos { return ops.Pos{Line: line, Column: col} })
	return objs, probs.List
}

// objects parses the objects given by exactly one of file and manifest.
func (c *checker) objects(file, manifest, path string) []ops.Object {
	switch {
	case file != "" && manifest != "":
		c.errorAt(path, "set file or manifest, not both")
	case file != "":
		return c.manifestFile(file, path+".file")
	case manifest != "":
		return c.inlineManifest(manifest, path+".manifest")
	default:
		c.errorAt(path, "want file or manifest")
	}
	return nil
}

// manifestFile parses a manifest file named relative to the lab file;
// problems inside it are reported with its own name and positions.
func (c *checker) manifestFile(name, path string) []ops.Object {
	if filepath.IsAbs(name) {
		c.errorAt(path, "file %q: want a path relative to the lab file", name)
		return nil
	}
	full := filepath.Join(c.dir, name)
	info, err := os.Stat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.errorAt(path, "file %q not found (looked for %s)", name, full)
	case err != nil:
		c.errorAt(path, "file %q: %v", name, err)
	case !info.Mode().IsRegular():
		c.errorAt(path, "file %q is not a regular file", name)
	case info.Size() > MaxManifestSize:
		c.errorAt(path, "file %q is too large: %d bytes, want at most %d", name, info.Size(), MaxManifestSize)
	default:
		data, err := os.ReadFile(full)
		if err != nil {
			c.errorAt(path, "file %q: %v", name, err)
			return nil
		}
		return c.parseObjects(data, path, full, func(line, col int) ops.Pos { return ops.Pos{Line: line, Column: col} })
	}
	return nil
}

// inlineManifest parses a manifest written in the lab file. When it is a
// literal block (manifest: |), positions inside it map to lines of the lab
// file; otherwise problems are reported at the manifest's start.
func (c *checker) inlineManifest(src, path string) []ops.Object {
	start := c.at(path)
	at := func(int, int) ops.Pos { return start }
	if n := c.nodes[path]; n != nil && n.Style&yaml.LiteralStyle != 0 {
		indent := c.blockIndent(n.Line)
		at = func(line, col int) ops.Pos { return ops.Pos{Line: n.Line + line, Column: indent + col} }
	}
	return c.parseObjects([]byte(src), path, c.file, at)
}

// blockIndent is the indentation of the first non-blank line after the
// header line of a block scalar.
func (c *checker) blockIndent(header int) int {
	for _, l := range c.lines[min(header, len(c.lines)):] {
		if t := strings.TrimLeft(l, " "); t != "" && t != "\r" {
			return len(l) - len(t)
		}
	}
	return 0
}

// parseObjects parses a multi-document manifest; at maps a line and
// column of data to a position in file.
func (c *checker) parseObjects(data []byte, path, file string, at func(line, col int) ops.Pos) []ops.Object {
	before := len(c.probs.List)
	report := func(pos ops.Pos, format string, args ...any) { c.probs.add(file, pos, path, format, args...) }
	var objs []ops.Object
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, msg := yamlError(err)
			report(at(line, 1), "invalid YAML: %s", msg)
			return objs
		}
		if len(doc.Content) == 0 || isNull(doc.Content[0]) {
			continue
		}
		if obj, ok := c.object(doc.Content[0], i, func(n *yaml.Node, format string, args ...any) {
			report(at(n.Line, n.Column), "document %d: "+format, append([]any{i}, args...)...)
		}); ok {
			obj.File, obj.Pos = file, at(doc.Content[0].Line, doc.Content[0].Column)
			objs = append(objs, obj)
		}
	}
	if len(objs) == 0 && len(c.probs.List) == before {
		report(at(1, 1), "no objects: want at least one Kubernetes object")
	}
	return objs
}

// object checks that a document is a Kubernetes object with apiVersion,
// kind and metadata.name, and decodes it.
func (c *checker) object(root *yaml.Node, doc int, report func(n *yaml.Node, format string, args ...any)) (ops.Object, bool) {
	if root.Kind != yaml.MappingNode {
		report(root, "want a Kubernetes object (a mapping), found %s", describeNode(root))
		return ops.Object{}, false
	}
	ok := nonEmpty(root, "apiVersion", "apiVersion", report)
	ok = nonEmpty(root, "kind", "kind", report) && ok
	switch meta := mappingValue(root, "metadata"); {
	case meta == nil:
		report(root, "missing metadata.name")
		ok = false
	case meta.Kind != yaml.MappingNode:
		report(meta, "metadata: want a mapping, found %s", describeNode(meta))
		ok = false
	default:
		ok = nonEmpty(meta, "name", "metadata.name", report) && ok
	}
	var content map[string]any
	if err := root.Decode(&content); err != nil {
		report(root, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		return ops.Object{}, false
	}
	return ops.Object{Content: content}, ok
}

// nonEmpty checks that mapping m has key with a non-empty string value;
// label names the key in messages.
func nonEmpty(m *yaml.Node, key, label string, report func(n *yaml.Node, format string, args ...any)) bool {
	v := mappingValue(m, key)
	switch {
	case v == nil:
		report(m, "missing %s", label)
	case v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || v.Value == "":
		report(v, "%s: want a non-empty string, found %s", label, describeNode(v))
	default:
		return true
	}
	return false
}

// mappingValue returns the value of key in mapping m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	_, v := mappingPair(m, key)
	return v
}

// mappingPair returns the key node and the value of key in mapping m, or
// nils (also when m is nil or not a mapping).
func mappingPair(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil {
		return nil, nil
	}
	if m = deref(m); m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], deref(m.Content[i+1])
		}
	}
	return nil, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlError splits a yaml.v3 syntax error into its line (1 when it has
// none) and message. yaml.v3 numbers lines from 0 in parser errors and from
// 1 in scanner errors; parser errors are recognized by their message.
func yamlError(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 1, msg
	}
	line, _ := strconv.Atoi(m[1])
	msg = err.Error()[len(m[0]):]
	if strings.HasPrefix(msg, "did not find expected <") || strings.HasPrefix(msg, "did not find expected node content") ||
		strings.HasPrefix(msg, "did not find expected key") || strings.HasPrefix(msg, "did not find expected '-'") ||
		strings.HasPrefix(msg, "did not find expected ','") || strings.HasPrefix(msg, "found duplicate %") ||
		strings.HasPrefix(msg, "found incompatible YAML") || strings.HasPrefix(msg, "found undefined tag handle") {
		line++
	}
	return max(line, 1), msg
}
