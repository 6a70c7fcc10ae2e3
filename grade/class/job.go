package class

import (
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The grading pod's file system: its input (the ConfigMaps), its work
// directory and /tmp. The root file system is read-only.
const (
	inDir     = "/in"
	workDir   = "/work"
	jobName   = "grade"
	container = "grade"
	// indexLabel is the label the Job controller puts on every pod of an
	// Indexed Job: the completion index it works on.
	indexLabel = "batch.kubernetes.io/job-completion-index"
)

// The resources of one grading pod: an embedded cluster (etcd, an
// apiserver, a scheduler, a controller-manager and kwok) is ~600 MiB and
// about one core while it boots, then little CPU. Requests let the
// scheduler spread the pods; the memory limit stops a runaway grading
// before it hurts its neighbours (the pod is then retried once).
var (
	podCPU         = resource.MustParse("500m")
	podMemory      = resource.MustParse("1Gi")
	podMemoryLimit = resource.MustParse("3Gi")
)

// podDeadline bounds one grading pod: the exercise's own time limit plus
// a cluster boot and its one retry.
func podDeadline(exerciseLimit time.Duration) time.Duration {
	return exerciseLimit + 3*time.Minute
}

func configMap(name string, binary map[string][]byte, data map[string]string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		BinaryData: binary, Data: data,
	}
}

func submissionConfigMap(i int) string { return "submission-" + strconv.Itoa(i) }

// job is the Indexed Job that grades n submissions, parallel at a time:
// pod i grades submissions/i.tgz. Each index is retried once
// (backoffLimitPerIndex: a failed or evicted pod), then it is failed and
// the others go on.
func job(image string, n, parallel int, limit time.Duration, labels map[string]string) *batchv1.Job {
	sources := []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: "exercise"},
		Items:                []corev1.KeyToPath{{Key: "exercise.tgz", Path: "exercise.tgz"}, {Key: "file", Path: "exercise.file"}},
	}}}
	for i := range n {
		sources = append(sources, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: submissionConfigMap(i)},
			Items: []corev1.KeyToPath{
				{Key: "submission.tgz", Path: fmt.Sprintf("submissions/%d.tgz", i)},
				{Key: "learner", Path: fmt.Sprintf("submissions/%d.learner", i)},
			},
		}})
	}
	rounds := (n + parallel - 1) / parallel
	pd := podDeadline(limit)
	uid := int64(65532)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: jobName, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode:       new(batchv1.IndexedCompletion),
			Completions:          new(int32(n)),
			Parallelism:          new(int32(parallel)),
			BackoffLimitPerIndex: new(int32(1)),
			MaxFailedIndexes:     new(int32(n)),
			// Every round may use its pods' deadline twice (the retry).
			ActiveDeadlineSeconds: new(int64(2*rounds)*int64(pd.Seconds()) + 60),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					ActiveDeadlineSeconds:         new(int64(pd.Seconds())),
					AutomountServiceAccountToken:  new(false),
					EnableServiceLinks:            new(false),
					TerminationGracePeriodSeconds: new(int64(10)),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: new(true), RunAsUser: &uid, RunAsGroup: &uid, FSGroup: &uid,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name: container, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
						Args: []string{"grade-pod", "--in", inDir, "--work", workDir},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: podCPU, corev1.ResourceMemory: podMemory},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: podMemoryLimit},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: new(false), ReadOnlyRootFilesystem: new(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "in", MountPath: inDir, ReadOnly: true},
							{Name: "work", MountPath: workDir},
							{Name: "tmp", MountPath: "/tmp"},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "in", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}},
						{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
}
