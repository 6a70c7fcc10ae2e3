package grade

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/load"
	"kubelab.dev/kubelab/ops"
)

// LoadExercise reads and checks an exercise: path is an exercise file or
// a directory holding exercise.yaml. See LoadExerciseBytes.
func LoadExercise(path string) (*Exercise, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, ExerciseFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load exercise: %w", err)
	}
	return LoadExerciseBytes(path, data)
}

// LoadExerciseBytes decodes and checks the content of an exercise file as
// strictly as a lab file (load.ReadLab): unknown fields, wrong types,
// invalid values, setup and check operations (their targets, manifests and
// expressions), the contract's kinds and namespaces, check names, the
// passing score and the samples' directories and documented scores are
// all checked, and every problem is reported with its file:line:column in
// a *load.Problems.
//
// On success the defaults are filled in: spec.timeout (10m), the
// topology's defaults, the contract's namespaces ([default]) and
// maxObjects (20), every operation's timeout.
func LoadExerciseBytes(path string, data []byte) (*Exercise, error) {
	var wire v1alpha1.Exercise
	doc, err := load.DecodeDocument(path, data, v1alpha1.KindExercise, &wire)
	if doc == nil {
		return nil, err
	}
	ex := &Exercise{}
	load.Convert(ex, &wire)
	c := &checker{doc: doc, dir: filepath.Dir(path)}
	c.exercise(ex)
	if err := doc.Err(); err != nil {
		return nil, err
	}
	return ex, nil
}

var (
	dnsLabelRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// checker checks a decoded exercise beyond its shape, reporting to the
// document it was decoded from, and fills defaults.
type checker struct {
	doc *load.Document
	dir string // the exercise's directory: samples are relative to it
}

func (c *checker) errorAt(path, format string, args ...any) { c.doc.Errorf(path, format, args...) }

// exercise checks a decoded exercise beyond its shape and fills defaults.
func (c *checker) exercise(ex *Exercise) {
	c.doc.CheckHeader(ex.APIVersion, ex.Kind, ex.Metadata.Name)
	if v := ex.Metadata.Difficulty; v != "" && !slices.Contains([]string{"easy", "medium", "hard"}, v) {
		c.errorAt("metadata.difficulty", "invalid difficulty %q: want easy, medium or hard", v)
	}
	s := &ex.Spec
	c.doc.CheckTopology(&s.Cluster)
	if s.Timeout.Duration == 0 {
		s.Timeout.Duration = DefaultExerciseTimeout
	}
	c.contract(&s.Submission)
	ex.checks = load.CheckNamed(c.doc, "spec.checks", "check", s.Checks, func(ch *Check) (string, []ops.Operation) { return ch.Name, ch.Try })
	c.doc.CheckOperations(exerciseOps(ex))
	ex.Source = c.doc.Source()
	total := ex.MaxScore()
	if len(s.Checks) > 0 && total == 0 {
		c.errorAt("spec.checks", "every check is worth 0 points: give at least one some points")
	}
	if s.PassingScore > total {
		c.errorAt("spec.passingScore", "passing score %d is more than the %d points of the checks", s.PassingScore, total)
	}
	c.destructive(ex)
	c.needs(ex)
	c.samples(ex, total)
	c.setupScore(ex, total)
	c.mistakes(ex, total)
	c.protect(ex)
}

// destructive infers which checks change the cluster: a check with an
// operation that is not read-only, in try or finally. One that says it is
// not destructive is refused at the first such operation.
func (c *checker) destructive(ex *Exercise) {
	for i := range ex.Spec.Checks {
		ch := &ex.Spec.Checks[i]
		var writer *ops.Operation
		for _, list := range [][]ops.Operation{ch.Try, ch.Finally} {
			for j := range list {
				if writer == nil && !list[j].ReadOnly() {
					writer = &list[j]
				}
			}
		}
		switch {
		case writer != nil && ch.Destructive != nil && !*ch.Destructive:
			c.errorAt(fmt.Sprintf("spec.checks[%d].destructive", i),
				"check %q changes the cluster (%s at line %d): it is destructive, and kubelab check must not run it while a learner works; remove destructive: false (a script or nodeExec that only reads says readOnly: true)",
				ch.Name, writer.Summary(), writer.Pos().Line)
		case ch.Destructive == nil:
			v := writer != nil
			ch.Destructive = &v
		}
	}
}

// needs checks that every check a check needs exists and runs before it
// (as written, destructive checks last).
func (c *checker) needs(ex *Exercise) {
	rank := map[string]int{}
	var names []string
	for r, i := range checkOrder(ex) {
		rank[ex.Spec.Checks[i].Name] = r
		names = append(names, ex.Spec.Checks[i].Name)
	}
	for i, ch := range ex.Spec.Checks {
		for k, n := range ch.Needs {
			p := fmt.Sprintf("spec.checks[%d].needs[%d]", i, k)
			r, ok := rank[n]
			switch {
			case !ok:
				c.errorAt(p, "unknown check %q%s", n, c.doc.Suggest(n, names))
			case n == ch.Name:
				c.errorAt(p, "check %q needs itself: name checks that run before it", n)
			case r > rank[ch.Name]:
				c.errorAt(p, "check %q runs after %q (as written, destructive checks last): a check can only need one that runs before it", n, ch.Name)
			}
		}
	}
}

// setupScore checks that the documented score of the setup state is
// consistent with the checks it fails.
func (c *checker) setupScore(ex *Exercise, total int) {
	if ss := ex.Spec.SetupScore; ss != nil {
		c.documentedScore(ex, "spec.setupScore", ss.Score, ss.Fails, total)
	}
}

// documentedScore checks that score, documented at p, is total minus the
// points of the checks it fails, and that those name checks.
func (c *checker) documentedScore(ex *Exercise, p string, score int, fails []string, total int) {
	points := map[string]int{}
	var names []string
	for _, ch := range ex.Spec.Checks {
		points[ch.Name] = ch.Points
		names = append(names, ch.Name)
	}
	lost, ok := 0, true
	for j, f := range fails {
		pts, known := points[f]
		if !known {
			c.errorAt(fmt.Sprintf("%s.fails[%d]", p, j), "unknown check %q%s", f, c.doc.Suggest(f, names))
			ok = false
		}
		lost += pts
	}
	failed := func(n string) bool { return slices.Contains(fails, n) }
	for _, ch := range ex.Spec.Checks {
		if failed(ch.Name) {
			continue
		}
		if i := slices.IndexFunc(ch.Needs, failed); i >= 0 {
			c.errorAt(p+".fails", "check %q needs %q, which this fails: it cannot pass, add it to fails", ch.Name, ch.Needs[i])
			ok = false
		}
	}
	if ok && total > 0 && score != total-lost {
		c.errorAt(p+".score", "score %d does not match the checks it fails: %d points minus %d lost = %d", score, total, lost, total-lost)
	}
}

// mistakes checks the documented mistakes' names and scores.
func (c *checker) mistakes(ex *Exercise, total int) {
	seen := map[string]bool{}
	for i, m := range ex.Spec.Mistakes {
		p := fmt.Sprintf("spec.mistakes[%d]", i)
		switch {
		case m.Name == "":
		case len(m.Name) > 63 || !dnsLabelRE.MatchString(m.Name):
			c.errorAt(p+".name", "invalid name %q: want a DNS label, e.g. finalize-namespace", m.Name)
		case seen[m.Name]:
			c.errorAt(p+".name", "duplicate mistake %q", m.Name)
		}
		seen[m.Name] = true
		if m.Do != nil && len(m.Do) == 0 {
			c.errorAt(p+".do", "want at least one operation: what the learner did")
		}
		c.documentedScore(ex, p, m.Score, m.Fails, total)
	}
}

// protect checks the protected objects and fills their namespaces.
func (c *checker) protect(ex *Exercise) {
	seen := map[string]bool{}
	for i := range ex.Spec.Protect {
		pr, p := &ex.Spec.Protect[i], fmt.Sprintf("spec.protect[%d]", i)
		info, known := builtinKinds[pr.Kind]
		switch {
		case pr.Kind == "":
			continue
		case !known:
			c.errorAt(p+".kind", "unknown kind %q: want a built-in kind such as Deployment%s", pr.Kind, c.doc.Suggest(pr.Kind, allowableKinds()))
			continue
		case info.namespaced && pr.Namespace == "":
			pr.Namespace = ex.Spec.Submission.DefaultNamespace()
		case !info.namespaced && pr.Namespace != "":
			c.errorAt(p+".namespace", "%s is cluster-scoped: it has no namespace", pr.Kind)
		}
		if pr.Name != "" && (len(pr.Name) > 253 || !dnsSubdomainRE.MatchString(pr.Name)) {
			c.errorAt(p+".name", "invalid name %q: want a DNS subdomain", pr.Name)
		}
		if seen[pr.UIDKey()] {
			c.errorAt(p, "%s %s is protected twice", pr.Kind, pr.Ref())
		}
		seen[pr.UIDKey()] = true
	}
}

// exerciseOps yields every operation with its path, in the order they
// run: setup, the solution's, the mistakes', then each check's try and
// finally.
func exerciseOps(ex *Exercise) iter.Seq2[string, *ops.Operation] {
	return func(yield func(string, *ops.Operation) bool) {
		for i := range ex.Spec.Setup {
			if !yield(fmt.Sprintf("spec.setup[%d]", i), &ex.Spec.Setup[i]) {
				return
			}
		}
		for i := range ex.Spec.Solution {
			if !yield(fmt.Sprintf("spec.solution[%d]", i), &ex.Spec.Solution[i]) {
				return
			}
		}
		for i := range ex.Spec.Mistakes {
			m := &ex.Spec.Mistakes[i]
			for j := range m.Do {
				if !yield(fmt.Sprintf("spec.mistakes[%d].do[%d]", i, j), &m.Do[j]) {
					return
				}
			}
		}
		for i := range ex.Spec.Checks {
			ch := &ex.Spec.Checks[i]
			for j := range ch.Try {
				if !yield(fmt.Sprintf("spec.checks[%d].try[%d]", i, j), &ch.Try[j]) {
					return
				}
			}
			for j := range ch.Finally {
				if !yield(fmt.Sprintf("spec.checks[%d].finally[%d]", i, j), &ch.Finally[j]) {
					return
				}
			}
		}
	}
}

func (c *checker) contract(k *v1alpha1.Contract) {
	const p = "spec.submission"
	if k.Kinds != nil && len(k.Kinds) == 0 {
		c.errorAt(p+".kinds", "want at least one kind")
	}
	seen := map[string]bool{}
	for i, kind := range k.Kinds {
		at := fmt.Sprintf("%s.kinds[%d]", p, i)
		info, known := builtinKinds[kind]
		switch {
		case kind == "":
		case !known:
			c.errorAt(at, "unknown kind %q: want a built-in kind such as Deployment%s", kind, c.doc.Suggest(kind, allowableKinds()))
		case info.never:
			c.errorAt(at, "kind %s can never be allowed in a submission: it changes the cluster's own machinery or reaches outside it", kind)
		case seen[kind]:
			c.errorAt(at, "duplicate kind %q", kind)
		}
		seen[kind] = true
	}
	if len(k.Namespaces) == 0 {
		k.Namespaces = []string{"default"}
	}
	nsSeen := map[string]bool{}
	for i, ns := range k.Namespaces {
		at := fmt.Sprintf("%s.namespaces[%d]", p, i)
		switch {
		case ns == "":
		case len(ns) > 63 || !dnsLabelRE.MatchString(ns):
			c.errorAt(at, "invalid namespace %q: want a DNS label", ns)
		case strings.HasPrefix(ns, "kube-"):
			c.errorAt(at, "namespace %q belongs to the cluster: submissions may not write there", ns)
		case nsSeen[ns]:
			c.errorAt(at, "duplicate namespace %q", ns)
		}
		nsSeen[ns] = true
	}
	switch {
	case k.MaxObjects == 0:
		k.MaxObjects = DefaultMaxObjects
	case k.MaxObjects > maxMaxObjects:
		c.errorAt(p+".maxObjects", "want at most %d, got %d", maxMaxObjects, k.MaxObjects)
	}
}

// samples checks that every sample directory exists and that its
// documented score is consistent with the checks it fails.
func (c *checker) samples(ex *Exercise, total int) {
	paths := map[string]bool{}
	for i, s := range ex.Spec.Samples {
		p := fmt.Sprintf("spec.samples[%d]", i)
		switch full := filepath.Join(c.dir, s.Path); {
		case s.Path == "":
		case filepath.IsAbs(s.Path) || strings.HasPrefix(filepath.Clean(s.Path), ".."):
			c.errorAt(p+".path", "path %q: want a directory inside the exercise directory", s.Path)
		case paths[filepath.Clean(s.Path)]:
			c.errorAt(p+".path", "duplicate sample %q", s.Path)
		default:
			if st, err := os.Stat(full); err != nil || !st.IsDir() {
				c.errorAt(p+".path", "sample directory %q not found (looked for %s)", s.Path, full)
			} else {
				c.sampleRefusals(&ex.Spec.Submission, full, s, p)
			}
		}
		paths[filepath.Clean(s.Path)] = true
		c.documentedScore(ex, p, s.Score, s.Fails, total)
		for j, r := range s.Refused {
			if !slices.Contains(Rules(), r) {
				c.errorAt(fmt.Sprintf("%s.refused[%d]", p, j), "unknown rule %q: want one of %s%s", r, strings.Join(Rules(), ", "), c.doc.Suggest(r, Rules()))
			}
		}
	}
}

// sampleRefusals reads a sample against the contract (no cluster needed)
// and checks that it is refused exactly what the sample documents.
func (c *checker) sampleRefusals(k *v1alpha1.Contract, dir string, s v1alpha1.Sample, p string) {
	sub, err := ReadSubmission(dir, k)
	if err != nil {
		c.errorAt(p+".path", "%v", err)
		return
	}
	var got []string
	for _, r := range sub.Refused {
		got = append(got, r.Rule)
	}
	if slices.Equal(got, s.Refused) {
		return
	}
	at := p + ".refused"
	if s.Refused == nil {
		at = p + ".path"
	}
	var why []string
	for _, r := range sub.Refused {
		why = append(why, r.Error())
	}
	c.errorAt(at, "the sample is refused %s, documented %s:\n\t%s", listOrNone(got), listOrNone(s.Refused), strings.Join(why, "\n\t"))
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "nothing"
	}
	return "[" + strings.Join(l, ", ") + "]"
}
