package grade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/ops"
)

// The live exercise loop: an exercise's cluster stays up after its setup
// (SetupExercise), the learner works on it with kubectl, and
// CheckExercise grades it as it is, as often as wanted, with the same
// checks, points, hints and report as Run.

// Names of what kubelab installs to protect an exercise's objects.
const (
	// ProtectPolicy names the ValidatingAdmissionPolicy and its binding.
	ProtectPolicy = "kubelab-exercise-protect"
	// SetupConfigMap is the ConfigMap in kube-system that holds the
	// exercise's name and the protected objects' uids after setup.
	SetupConfigMap = "kubelab-exercise"
)

// SetupExercise prepares a live exercise on the cluster of es: the
// exercise's setup operations, the contract's namespaces, and the
// protection of spec.protect. The grade holds the setup's results; the
// error says why the exercise could not be set up.
func SetupExercise(ctx context.Context, es *engine.Session, ex *Exercise) (*Grade, error) {
	g := newGrade(ex, nil, "")
	s := session{es}
	s.Declare(ex.Bindings())
	if err := s.gradeSetup(ctx, ex, g); err != nil {
		return g, err
	}
	if err := s.applySubmission(ctx, &ex.Spec.Submission, nil, g); err != nil {
		return g, err
	}
	return g, nil
}

// CheckOptions say how a live cluster is checked.
type CheckOptions struct {
	// Final runs the destructive checks too, after the others.
	Final bool
	// Patience caps each non-destructive check on a live cluster (0: the
	// check's own timeouts): the learner wants a verdict on the cluster
	// as it is, not a minute of waiting for a fix that is not there.
	Patience time.Duration
}

// SkippedDestructive is the error of a destructive check that a live
// check did not run.
const SkippedDestructive = "not run: it hurts the cluster (destructive); kubelab check --final runs it"

// CheckExercise grades the cluster of es as it is with the exercise's
// checks: the same points, hints and expected and observed values as
// Run, nothing applied, nothing restarted. Destructive checks are
// skipped (and say so) unless o.Final; they run after the others.
func CheckExercise(ctx context.Context, es *engine.Session, ex *Exercise, o CheckOptions) *Grade {
	g := newGrade(ex, nil, "")
	s := session{es}
	g.Submission = "live cluster " + s.Topology().Name
	defer func() { g.Duration = time.Since(g.Started) }()
	s.Declare(ex.Bindings())
	for _, i := range checkOrder(ex) {
		ch := &ex.Spec.Checks[i]
		if ctx.Err() != nil {
			g.fail(ex, StatusError, "interrupted: %v", ctx.Err())
			return g
		}
		if ch.IsDestructive() && !o.Final {
			g.Checks = append(g.Checks, CheckResult{Name: ch.Name, Points: ch.Points, Status: engine.Skipped, Hint: ch.Hint,
				Explanation: ch.Explanation, Error: SkippedDestructive, Ops: []engine.OpResult{}})
			continue
		}
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if o.Patience > 0 && !ch.IsDestructive() {
			cctx, cancel = context.WithTimeout(ctx, o.Patience)
		}
		cr := s.gradeCheck(cctx, ex, ch, ex.Timeout(), g.Checks)
		if cr.Status == engine.Failed && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && cr.Expected != "" {
			// Its expectation names the check's own time limit: say that it
			// was not waited out.
			cr.Expected += fmt.Sprintf(" (gave up after %s, the patience of a live check; check --final waits the whole time)", o.Patience)
		}
		g.Checks = append(g.Checks, cr)
		cancel()
	}
	for _, c := range g.Checks {
		g.Score += c.Earned
	}
	g.Passed = g.Score >= g.PassingScore
	return g
}

// ApplySubmission applies a submission's accepted objects to the cluster
// of es (the reference solution, for `kubelab solve`).
func ApplySubmission(ctx context.Context, es *engine.Session, ex *Exercise, sub *Submission) (*Grade, error) {
	g := newGrade(ex, sub, "")
	return g, session{es}.applySubmission(ctx, &ex.Spec.Submission, sub, g)
}

// checkOrder is the order checks run in: as written, destructive ones
// last (they may leave the cluster hurt for the checks after them).
func checkOrder(ex *Exercise) []int {
	var out, last []int
	for i, ch := range ex.Spec.Checks {
		if ch.IsDestructive() {
			last = append(last, i)
		} else {
			out = append(out, i)
		}
	}
	return append(out, last...)
}

// protectTimeout bounds installing the protection and waiting until the
// apiservers enforce it.
const protectTimeout = 60 * time.Second

// protect installs the ValidatingAdmissionPolicy that denies deleting the
// exercise's protected objects, records their uids in the ConfigMap
// kube-system/kubelab-exercise, and waits until the apiserver refuses a
// dry-run delete of each (the policy is active).
func (s session) protect(ctx context.Context, ex *Exercise) error {
	if len(ex.Spec.Protect) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, protectTimeout)
	defer cancel()
	cfg, err := s.Cluster().RESTConfig()
	if err != nil {
		return fmt.Errorf("protect: %w", err)
	}
	cs, err := s.Cluster().Client()
	if err != nil {
		return fmt.Errorf("protect: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("protect: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	uids := map[string]string{"exercise": ex.Metadata.Name}
	// On a cluster kubelab shares, the run's labels make Down remove the
	// policy, its binding and the ConfigMap; one already there is another
	// run's, not to be taken over.
	labels := map[string]string{"kubelab.dev/exercise": ex.Metadata.Name}
	maps.Copy(labels, s.Cluster().RunLabels())
	shared := s.Cluster().RunLabels() != nil
	exists := func(err error) bool { return apierrors.IsAlreadyExists(err) && !shared }
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: ProtectPolicy, Labels: labels},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{},
		},
	}
	type target struct {
		res schema.GroupVersionResource
		p   *v1alpha1.Protected
	}
	var targets []target
	rules := map[schema.GroupResource]bool{}
	for i := range ex.Spec.Protect {
		p := &ex.Spec.Protect[i]
		m, err := mapper.RESTMapping(schema.GroupKind{Group: builtinKinds[p.Kind].group, Kind: p.Kind})
		if err != nil {
			return fmt.Errorf("protect %s %s: %w", p.Kind, p.Ref(), err)
		}
		obj, err := dyn.Resource(m.Resource).Namespace(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("protect %s %s: the setup must create it: %w", p.Kind, p.Ref(), err)
		}
		uids[p.UIDKey()] = string(obj.GetUID())
		targets = append(targets, target{m.Resource, p})
		gr := m.Resource.GroupResource()
		if !rules[gr] {
			rules[gr] = true
			policy.Spec.MatchConstraints.ResourceRules = append(policy.Spec.MatchConstraints.ResourceRules, admissionv1.NamedRuleWithOperations{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Delete},
					Rule:       admissionv1.Rule{APIGroups: []string{gr.Group}, APIVersions: []string{"*"}, Resources: []string{gr.Resource}},
				},
			})
		}
		policy.Spec.Validations = append(policy.Spec.Validations, admissionv1.Validation{
			Expression: fmt.Sprintf("!(request.resource.group == %q && request.resource.resource == %q && request.namespace == %q && request.name == %q)",
				gr.Group, gr.Resource, p.Namespace, p.Name),
			Message: p.DefaultMessage(),
		})
	}
	adm := cs.AdmissionregistrationV1()
	if _, err := adm.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil && !exists(err) {
		return fmt.Errorf("protect: create ValidatingAdmissionPolicy %s: %w", ProtectPolicy, err)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ProtectPolicy, Labels: policy.Labels},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        ProtectPolicy,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	if _, err := adm.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !exists(err) {
		return fmt.Errorf("protect: create ValidatingAdmissionPolicyBinding %s: %w", ProtectPolicy, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SetupConfigMap, Namespace: metav1.NamespaceSystem, Labels: policy.Labels}, Data: uids}
	if _, err := cs.CoreV1().ConfigMaps(metav1.NamespaceSystem).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !exists(err) {
		return fmt.Errorf("protect: record the uids in ConfigMap %s/%s: %w", metav1.NamespaceSystem, SetupConfigMap, err)
	}
	// The apiservers load policies through an informer: a policy is not
	// enforced the moment it is created. A dry-run delete goes through
	// admission without deleting anything.
	for _, t := range targets {
		var last error
		for {
			err := dyn.Resource(t.res).Namespace(t.p.Namespace).Delete(ctx, t.p.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil && strings.Contains(err.Error(), t.p.DefaultMessage()) {
				break
			}
			last = err
			if last == nil {
				last = errors.New("a dry-run delete was allowed")
			}
			if serr := ops.Sleep(ctx, 200*time.Millisecond); serr != nil {
				return fmt.Errorf("protect %s %s: the policy is not enforced: %w", t.p.Kind, t.p.Ref(), errors.Join(last, serr))
			}
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// ErrNotLive says an exercise cannot run on a live cluster.
var ErrNotLive = errors.New("cannot run live")

// CheckLive says whether the exercise can run live: values its setup
// records (record operations) live only in the process that ran the
// setup, so the checks of a later `kubelab check` would see zero values.
func (e *Exercise) CheckLive() error {
	var names []string
	for i := range e.Spec.Setup {
		if r := e.Spec.Setup[i].Record; r != nil {
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("exercise %s %w: its setup records %s, which a later kubelab check cannot see; grade it with kubelab grade instead",
		e.Metadata.Name, ErrNotLive, strings.Join(names, ", "))
}

// WriteLiveStatement writes what a learner needs on a live cluster: the
// title, the statement, and the checks `kubelab check` runs with their
// points (destructive ones marked: only --final runs them). Hints,
// explanations, notes and samples are not shown. Its headings are in p's
// language (nil: English).
func WriteLiveStatement(w io.Writer, p *i18n.Printer, ex *Exercise) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", ex.Metadata.Title, strings.TrimSpace(ex.Spec.Statement))
	p.Fprintf(&b, "## Checks\n\n| Check | Points |\n|---|---|\n")
	for _, c := range ex.Spec.Checks {
		name := mdCell(c.Name)
		if c.IsDestructive() {
			name += p.S(" (destructive: only `kubelab check --final` runs it)")
		}
		fmt.Fprintf(&b, "| %s | %d |\n", name, c.Points)
	}
	p.Fprintf(&b, "\nPassing score: %d of %d.\n", ex.PassingScore(), ex.MaxScore())
	if len(ex.Spec.Protect) > 0 {
		var objs []string
		for _, p := range ex.Spec.Protect {
			objs = append(objs, p.Kind+" "+p.Ref())
		}
		p.Fprintf(&b, "Repair in place, do not delete: %s.\n", strings.Join(objs, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
