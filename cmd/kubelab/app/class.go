package app

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/grade/class"
)

// gradeOnCluster grades --submissions in pods of the class cluster --on.
func gradeOnCluster(cmd *cobra.Command, g *globals, f *gradeFlags, ex *grade.Exercise) error {
	if f.submissions == "" {
		return invalid(errors.New("--on grades a class: give --submissions DIR (one sub-directory per learner)"))
	}
	if f.kube.kubeconfig != "" || f.kube.context != "" || f.backend != backendEmbedded || f.keep {
		return invalid(errors.New("--on grades in pods of the class cluster, each on its own embedded cluster: --backend, --kubeconfig, --context and --keep-on-failure do not apply (the class cluster's context is --on-context)"))
	}
	learners, err := grade.Learners(f.submissions)
	if err != nil {
		return invalid(err)
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.on},
		&clientcmd.ConfigOverrides{CurrentContext: f.onContext}).ClientConfig()
	if err != nil {
		return invalid(fmt.Errorf("--on %s: %w", f.on, err))
	}
	image := f.image
	if image == "" {
		bin, err := os.Executable()
		if err != nil {
			return err
		}
		if image, err = docker.GraderImage(bin); err != nil {
			return err
		}
	}
	o := class.Options{Config: cfg, Image: image, Parallel: f.parallel, Progress: func(s string) { fmt.Fprintln(g.streams.Err, s) }}
	grades, err := class.Run(cmd.Context(), o, ex, learners)
	if grades == nil && err != nil {
		return cannotRun(err)
	}
	return writeBatch(g, f, ex, grades, err)
}

// newGradePodCommand is what a grading pod of `kubelab grade --on` runs.
func newGradePodCommand(g *globals) *cobra.Command {
	var in, work string
	cmd := &cobra.Command{
		Use:    "grade-pod",
		Short:  "Grade one submission inside a class-grading pod (run by `kubelab grade --on`)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			index, err := strconv.Atoi(os.Getenv("JOB_COMPLETION_INDEX"))
			if err != nil {
				return invalid(fmt.Errorf("grade-pod runs in a pod of an Indexed Job: JOB_COMPLETION_INDEX: %w", err))
			}
			r, err := gradeRunner(g, &gradeFlags{backend: backendEmbedded})
			if err != nil {
				return invalid(err)
			}
			gr, err := class.Work(cmd.Context(), r, in, work, index)
			if err != nil {
				return cannotRun(err)
			}
			if err := class.WriteResult(g.streams.Out, gr); err != nil {
				return err
			}
			if gr.Status == grade.StatusError {
				// The Job retries the pod once.
				return cannotRun(fmt.Errorf("%w: %s", ErrNotGraded, gr.Error))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&in, "in", "/in", "the pod's input: exercise.tgz, exercise.file, submissions/INDEX.{tgz,learner}")
	cmd.Flags().StringVar(&work, "work", "/work", "a writable directory to unpack into")
	return cmd
}
