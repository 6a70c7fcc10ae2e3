package grade

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/load"
	"kubelab.dev/kubelab/ops"
)

// Rules a refused part of a submission broke; Refusal.Rule is one of them.
const (
	// RuleFile: the file is a symlink, not a regular file, or too large.
	RuleFile = "file"
	// RuleInvalid: the file is not YAML or JSON Kubernetes objects.
	RuleInvalid = "invalid-manifest"
	// RuleKind: the kind is not allowed by the exercise, or never allowed.
	RuleKind = "kind-not-allowed"
	// RuleClusterScoped: a cluster-scoped kind the exercise does not allow.
	RuleClusterScoped = "cluster-scoped"
	// RuleNamespace: a namespace the exercise does not allow.
	RuleNamespace = "namespace-not-allowed"
	// RulePrivileged: a privileged container.
	RulePrivileged = "privileged"
	// RuleCapabilities: a container adds capabilities beyond the Pod
	// Security "baseline" set.
	RuleCapabilities = "capabilities"
	// RuleHostPath: a hostPath volume.
	RuleHostPath = "host-path"
	// RuleHostNetwork: a pod on the node's network namespace.
	RuleHostNetwork = "host-network"
	// RuleHostPID: a pod in the node's PID namespace.
	RuleHostPID = "host-pid"
	// RuleHostIPC: a pod in the node's IPC namespace.
	RuleHostIPC = "host-ipc"
	// RuleHostPort: a container port bound on the node.
	RuleHostPort = "host-port"
	// RuleName: the object's name (or namespace) is not one the API
	// server accepts (a DNS subdomain: lower-case letters, digits, '-'
	// and '.').
	RuleName = "invalid-name"
	// RuleDuplicate: the same object twice.
	RuleDuplicate = "duplicate"
	// RuleTooMany: more objects than the exercise allows.
	RuleTooMany = "too-many-objects"
	// RuleReplicas: a workload asks for more pods than a grading cluster
	// should hold (MaxReplicas).
	RuleReplicas = "too-many-replicas"
)

// MaxReplicas bounds the replicas (or Job parallelism and completions) of
// one workload of a submission: a grading cluster is small, and a
// submission must not be able to flood it.
const MaxReplicas = 50

// Rules lists every refusal rule.
func Rules() []string {
	return []string{RuleFile, RuleInvalid, RuleKind, RuleClusterScoped, RuleNamespace, RulePrivileged, RuleCapabilities,
		RuleHostPath, RuleHostNetwork, RuleHostPID, RuleHostIPC, RuleHostPort, RuleReplicas, RuleName, RuleDuplicate, RuleTooMany}
}

// baselineCapabilities are the capabilities the Pod Security "baseline"
// profile lets a container add.
var baselineCapabilities = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

// maxSubmissionFiles and maxSubmissionBytes bound what is read from a
// submission directory.
const (
	maxSubmissionFiles = 200
	maxSubmissionBytes = 16 << 20
)

// Refusal is a part of a submission that was not applied: an object (or a
// whole file) and the rule it broke.
type Refusal struct {
	// File is the file, relative to the submission directory.
	File string `json:"file"`
	// Line and Column locate the object's document in File (0 when the
	// whole file is refused).
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Object is "Kind namespace/name" (or "Kind name" when cluster-scoped);
	// empty when the file could not be read as objects.
	Object string `json:"object,omitempty"`
	// Rule is the rule broken: one of Rules().
	Rule string `json:"rule"`
	// Message says what is wrong and why it is refused.
	Message string `json:"message"`
}

// Error renders the refusal as `file:line:col: object: refused (rule): message`.
func (r Refusal) Error() string {
	var b strings.Builder
	b.WriteString(r.File)
	if r.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", r.Line, r.Column)
	}
	b.WriteString(": ")
	if r.Object != "" {
		b.WriteString(r.Object + ": ")
	}
	fmt.Fprintf(&b, "refused (%s): %s", r.Rule, r.Message)
	return b.String()
}

// SubmittedObject is an object of a submission that respects the
// contract, ready to apply.
type SubmittedObject struct {
	// Object is the decoded object; Object.File is the full path.
	ops.Object
	// RelFile is the file relative to the submission directory.
	RelFile string
	// Kind, Namespace ("" when cluster-scoped) and Name of the object.
	Kind, Namespace, Name string
}

// Ref is "Kind namespace/name", or "Kind name" for cluster-scoped objects.
func (o SubmittedObject) Ref() string { return objectRef(o.Kind, o.Namespace, o.Name) }

func objectRef(kind, ns, name string) string {
	if ns == "" {
		return kind + " " + name
	}
	return kind + " " + ns + "/" + name
}

// Submission is a directory of manifests read against an exercise's
// contract: the objects to apply, and what was refused.
type Submission struct {
	// Dir is the submission directory.
	Dir string
	// Objects respect the contract, in the order they are applied
	// (namespaces and classes, identities, configuration, services,
	// workloads), file order within a kind.
	Objects []SubmittedObject
	// Refused lists what was not applied, in file order.
	Refused []Refusal
	// Ignored lists files that are not manifests (README.md...), relative
	// to Dir. They are never read.
	Ignored []string
}

// ReadSubmission reads every *.yaml, *.yml and *.json file under dir
// (sorted, hidden directories skipped) and sorts its objects into those
// that respect the contract and those refused, each refusal naming the
// file, the object and the rule. Only reading the directory can fail; a
// broken manifest is a refusal. Nothing in the directory is executed.
func ReadSubmission(dir string, c *v1alpha1.Contract) (*Submission, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("read submission: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("read submission %s: not a directory", dir)
	}
	s := &Submission{Dir: dir}
	var files []string
	err = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case e.IsDir() && path != dir && strings.HasPrefix(e.Name(), "."):
			return filepath.SkipDir
		case e.IsDir():
			return nil
		case !isManifestName(e.Name()):
			s.Ignored = append(s.Ignored, rel)
		case e.Type()&fs.ModeSymlink != 0:
			s.Refused = append(s.Refused, Refusal{File: rel, Rule: RuleFile, Message: "symbolic link: a submission is a plain directory of manifests; links are not followed"})
		case !e.Type().IsRegular():
			s.Refused = append(s.Refused, Refusal{File: rel, Rule: RuleFile, Message: "not a regular file"})
		default:
			if len(files) == maxSubmissionFiles {
				return fmt.Errorf("more than %d manifest files", maxSubmissionFiles)
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read submission %s: %w", dir, err)
	}
	r := &submissionReader{c: c, s: s, seen: map[string]string{}}
	for _, rel := range files {
		r.file(rel)
	}
	sort.SliceStable(s.Refused, func(i, j int) bool {
		a, b := s.Refused[i], s.Refused[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	sort.SliceStable(s.Objects, func(i, j int) bool {
		return builtinKinds[s.Objects[i].Kind].order < builtinKinds[s.Objects[j].Kind].order
	})
	return s, nil
}

func isManifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

type submissionReader struct {
	c        *v1alpha1.Contract
	s        *Submission
	seen     map[string]string // object key -> where it was first defined
	accepted int
	read     int64 // bytes read so far
}

func (r *submissionReader) refuse(o *SubmittedObject, rule, format string, args ...any) {
	r.s.Refused = append(r.s.Refused, Refusal{File: o.RelFile, Line: o.Pos.Line, Column: o.Pos.Column, Object: o.Ref(), Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// file parses one manifest file with the lab loader's manifest checks
// and checks each object against the contract.
func (r *submissionReader) file(rel string) {
	full := filepath.Join(r.s.Dir, rel)
	info, err := os.Lstat(full)
	switch {
	case err != nil:
		r.s.Refused = append(r.s.Refused, Refusal{File: rel, Rule: RuleFile, Message: err.Error()})
		return
	case info.Size() > load.MaxManifestSize:
		r.s.Refused = append(r.s.Refused, Refusal{File: rel, Rule: RuleFile, Message: fmt.Sprintf("too large: %d bytes, want at most %d", info.Size(), load.MaxManifestSize)})
		return
	case r.read+info.Size() > maxSubmissionBytes:
		r.s.Refused = append(r.s.Refused, Refusal{File: rel, Rule: RuleFile, Message: fmt.Sprintf("not read: the submission's files add up to more than %d bytes", maxSubmissionBytes)})
		return
	}
	r.read += info.Size()
	data, err := os.ReadFile(full)
	if err != nil {
		r.s.Refused = append(r.s.Refused, Refusal{File: rel, Rule: RuleFile, Message: err.Error()})
		return
	}
	objs, probs := load.ParseManifest(rel, data)
	for _, p := range probs {
		if len(objs) == 0 && strings.HasPrefix(p.Message, "no objects") {
			r.s.Ignored = append(r.s.Ignored, rel) // only comments
			continue
		}
		r.s.Refused = append(r.s.Refused, Refusal{File: rel, Line: p.Line, Column: p.Column, Rule: RuleInvalid, Message: p.Message})
	}
	for _, o := range objs {
		o.File = full
		r.object(rel, o)
	}
}

// object checks one object: kind, scope, namespace, pod security, and
// duplicates; it is accepted only if it breaks no rule.
func (r *submissionReader) object(rel string, o ops.Object) {
	kind, _ := o.Content["kind"].(string)
	apiVersion, _ := o.Content["apiVersion"].(string)
	meta, _ := o.Content["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	info, known := builtinKinds[kind]
	if known && info.namespaced && ns == "" {
		ns = r.c.DefaultNamespace()
	}
	if !info.namespaced {
		ns = ""
	}
	so := SubmittedObject{Object: o, RelFile: rel, Kind: kind, Namespace: ns, Name: name}
	before := len(r.s.Refused)
	allowed := slices.Contains(r.c.Kinds, kind)
	switch {
	case known && info.never:
		r.refuse(&so, RuleKind, "%s objects change the cluster's own machinery and are never allowed in a submission", kind)
	case known && !info.namespaced && !allowed:
		r.refuse(&so, RuleClusterScoped, "%s is cluster-scoped and this exercise does not allow it; allowed kinds: %s", kind, strings.Join(r.c.Kinds, ", "))
	case !allowed:
		r.refuse(&so, RuleKind, "kind %s is not allowed by this exercise; allowed kinds: %s", kind, strings.Join(r.c.Kinds, ", "))
	case apiGroup(apiVersion) != info.group:
		want := "v1"
		if info.group != "" {
			want = info.group + "/<version>"
		}
		r.refuse(&so, RuleKind, "apiVersion %q is not the built-in %s (want %s)", apiVersion, kind, want)
	}
	for _, f := range [][2]string{{"name", name}, {"namespace", ns}} {
		what, v := f[0], f[1]
		if v == "" {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
			r.refuse(&so, RuleName, "metadata.%s %s is not a valid name: %s", what, strconv.Quote(v), strings.Join(errs, "; "))
		}
	}
	if info.namespaced && !slices.Contains(r.contractNamespaces(), ns) {
		r.refuse(&so, RuleNamespace, "namespace %q is not allowed by this exercise; allowed: %s", ns, strings.Join(r.contractNamespaces(), ", "))
	}
	if kind == "Namespace" && allowed && !slices.Contains(r.contractNamespaces(), name) {
		r.refuse(&so, RuleNamespace, "namespace %q is not allowed by this exercise; allowed: %s", name, strings.Join(r.contractNamespaces(), ", "))
	}
	if spec, ok := lookup(o.Content, info.podSpec); ok && len(info.podSpec) > 0 {
		for _, v := range podSecurity(spec) {
			r.refuse(&so, v.rule, "%s", v.msg)
		}
	}
	for _, f := range replicaFields(o.Content) {
		r.refuse(&so, RuleReplicas, "%s: %v: at most %d per workload on a grading cluster", f.path, f.value, MaxReplicas)
	}
	if len(r.s.Refused) > before {
		return
	}
	key := kind + "/" + ns + "/" + name
	if first, dup := r.seen[key]; dup {
		r.refuse(&so, RuleDuplicate, "defined twice (first at %s); each object once", first)
		return
	}
	r.seen[key] = fmt.Sprintf("%s:%d", rel, o.Pos.Line)
	if max := r.maxObjects(); r.accepted >= max {
		r.refuse(&so, RuleTooMany, "this exercise allows at most %d objects", max)
		return
	}
	r.accepted++
	r.s.Objects = append(r.s.Objects, so)
}

func (r *submissionReader) contractNamespaces() []string {
	if len(r.c.Namespaces) == 0 {
		return []string{"default"}
	}
	return r.c.Namespaces
}

func (r *submissionReader) maxObjects() int {
	if r.c.MaxObjects > 0 {
		return r.c.MaxObjects
	}
	return DefaultMaxObjects
}

// lookup follows a path of keys through nested maps.
func lookup(m map[string]any, path []string) (map[string]any, bool) {
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}

type violation struct{ rule, msg string }

type replicaField struct {
	path  string
	value any
}

// loadFields are the fields that multiply the pods a workload makes, by
// kind: each is bounded by MaxReplicas.
var loadFields = map[string][][]string{
	"Deployment":              {{"spec", "replicas"}},
	"ReplicaSet":              {{"spec", "replicas"}},
	"StatefulSet":             {{"spec", "replicas"}},
	"ReplicationController":   {{"spec", "replicas"}},
	"Job":                     {{"spec", "parallelism"}, {"spec", "completions"}},
	"CronJob":                 {{"spec", "jobTemplate", "spec", "parallelism"}, {"spec", "jobTemplate", "spec", "completions"}},
	"HorizontalPodAutoscaler": {{"spec", "minReplicas"}, {"spec", "maxReplicas"}},
}

// replicaFields lists the pod counts of a workload above MaxReplicas. A
// count is read as the API server will read it: any number (2e2 and
// 150.0 are 200 and 150 once the manifest is sent as JSON), or a string
// of digits; anything else the API server refuses by itself.
func replicaFields(obj map[string]any) []replicaField {
	kind, _ := obj["kind"].(string)
	paths, ok := loadFields[kind]
	if !ok {
		// Not a known workload: bound the usual fields anyway.
		paths = [][]string{{"spec", "replicas"}, {"spec", "parallelism"}, {"spec", "completions"}}
	}
	var out []replicaField
	for _, p := range paths {
		parent, ok := lookup(obj, p[:len(p)-1])
		if !ok {
			continue
		}
		v, present := parent[p[len(p)-1]]
		if !present {
			continue
		}
		if n, ok := podCount(v); ok && n > MaxReplicas {
			out = append(out, replicaField{strings.Join(p, "."), v})
		}
	}
	return out
}

// podCount is v as a number, whatever numeric form the YAML or JSON
// decoder gave it.
func podCount(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil && !math.IsNaN(f)
	}
	return 0, false
}

// podSecurity lists what a pod spec does that a submission may never do:
// reach the node (host namespaces, hostPath, hostPort) or leave the
// container's confinement (privileged, added capabilities).
func podSecurity(spec map[string]any) []violation {
	var out []violation
	for _, h := range []struct{ field, rule, what string }{
		{"hostNetwork", RuleHostNetwork, "the node's network"},
		{"hostPID", RuleHostPID, "the node's processes"},
		{"hostIPC", RuleHostIPC, "the node's IPC"},
	} {
		if spec[h.field] == true {
			out = append(out, violation{h.rule, fmt.Sprintf("spec.%s: true shares %s with the pod and is never allowed in a submission", h.field, h.what)})
		}
	}
	vols, _ := spec["volumes"].([]any)
	for _, v := range vols {
		vm, _ := v.(map[string]any)
		if hp, ok := vm["hostPath"].(map[string]any); ok || vm["hostPath"] != nil {
			path, _ := hp["path"].(string)
			out = append(out, violation{RuleHostPath, fmt.Sprintf("volume %q mounts hostPath %q: hostPath volumes reach the node's filesystem and are never allowed in a submission", vm["name"], path)})
		}
	}
	for _, field := range []string{"initContainers", "containers", "ephemeralContainers"} {
		cs, _ := spec[field].([]any)
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			name, _ := cm["name"].(string)
			sc, _ := cm["securityContext"].(map[string]any)
			if sc["privileged"] == true {
				out = append(out, violation{RulePrivileged, fmt.Sprintf("container %q sets securityContext.privileged: true: a privileged container has every capability and the node's devices; never allowed in a submission", name)})
			}
			caps, _ := sc["capabilities"].(map[string]any)
			add, _ := caps["add"].([]any)
			for _, a := range add {
				capName := strings.TrimPrefix(strings.ToUpper(fmt.Sprint(a)), "CAP_")
				if !slices.Contains(baselineCapabilities, capName) {
					out = append(out, violation{RuleCapabilities, fmt.Sprintf("container %q adds capability %s: only the Pod Security baseline capabilities may be added", name, capName)})
				}
			}
			ports, _ := cm["ports"].([]any)
			for _, p := range ports {
				pm, _ := p.(map[string]any)
				if hp, ok := pm["hostPort"]; ok && hp != 0 && hp != nil {
					out = append(out, violation{RuleHostPort, fmt.Sprintf("container %q binds hostPort %v on the node; never allowed in a submission", name, hp)})
				}
			}
		}
	}
	return out
}

// errNoSubmission is returned when a batch directory holds no submission.
var errNoSubmission = errors.New("no submission directories")
