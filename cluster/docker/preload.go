package docker

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/distribution/reference"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"kubelab.dev/kubelab/cluster/controlplane"
)

// A docker cluster reaches no registry: an image put on the workers by
// `kubelab images load` must run as loaded, whatever its tag, or a pod
// of "nginx" (the tag latest, so imagePullPolicy Always) would wait on a
// pull that cannot succeed, which kind leaves its users to work around.
// A MutatingAdmissionPolicy, readable in the cluster like any other, sets
// imagePullPolicy IfNotPresent on the containers whose image is listed in
// the ConfigMap kube-system/kubelab-preloaded-images.
const preloadName = "kubelab-preloaded-images"

const preloadPolicy = `
metadata: {name: kubelab-preloaded-images}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  failurePolicy: Fail
  reinvocationPolicy: Never
  variables:
  - name: loaded
    expression: '"images" in params.data ? params.data.images.split("\n") : []'
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{spec: Object.spec{
          containers: object.spec.containers.map(c, Object.spec.containers{
            name: c.name,
            imagePullPolicy: c.image in variables.loaded ? "IfNotPresent" : c.imagePullPolicy})}}
`

const preloadBinding = `
metadata: {name: kubelab-preloaded-images}
spec:
  policyName: kubelab-preloaded-images
  paramRef: {name: kubelab-preloaded-images, namespace: kube-system, parameterNotFoundAction: Deny}
`

// installPreload creates the policy, its binding and the empty list.
func installPreload(ctx context.Context, cs kubernetes.Interface) error {
	var pol admissionv1.MutatingAdmissionPolicy
	var bind admissionv1.MutatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict([]byte(preloadPolicy), &pol); err != nil {
		return fmt.Errorf("preloaded images policy: %w", err)
	}
	if err := yaml.UnmarshalStrict([]byte(preloadBinding), &bind); err != nil {
		return fmt.Errorf("preloaded images binding: %w", err)
	}
	if err := controlplane.Create(ctx, "configmap "+preloadName, func(ctx context.Context) (any, error) {
		return cs.CoreV1().ConfigMaps("kube-system").Create(ctx,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: preloadName}, Data: map[string]string{"images": ""}}, metav1.CreateOptions{})
	}); err != nil {
		return err
	}
	if err := controlplane.Create(ctx, "mutatingadmissionpolicy "+preloadName, func(ctx context.Context) (any, error) {
		return cs.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, &pol, metav1.CreateOptions{})
	}); err != nil {
		return err
	}
	return controlplane.Create(ctx, "mutatingadmissionpolicybinding "+preloadName, func(ctx context.Context) (any, error) {
		return cs.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, &bind, metav1.CreateOptions{})
	})
}

var unpacked = regexp.MustCompile(`unpacking (\S+) \(sha256:`)

// importedImages are the image names `ctr images import` says it unpacked.
func importedImages(out string) []string {
	var names []string
	for _, m := range unpacked.FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	return names
}

// imageAliases are the ways a pod may name image: "docker.io/library/
// nginx:latest" is also "nginx:latest", and, being the latest tag, "nginx"
// and "docker.io/library/nginx".
func imageAliases(image string) []string {
	out := []string{image}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return out
	}
	out = append(out, named.String(), reference.FamiliarString(named))
	if t, ok := named.(reference.Tagged); ok && t.Tag() == "latest" {
		out = append(out, named.Name(), reference.FamiliarName(named))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// markPreloaded adds images (and their aliases) to the list the policy
// reads.
func markPreloaded(ctx context.Context, cs kubernetes.Interface, images []string) error {
	cm, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, preloadName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("preloaded images list: %w", err)
	}
	list := strings.Fields(cm.Data["images"])
	for _, img := range images {
		list = append(list, imageAliases(img)...)
	}
	slices.Sort(list)
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["images"] = strings.Join(slices.Compact(list), "\n")
	if _, err := cs.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("preloaded images list: %w", err)
	}
	return nil
}
