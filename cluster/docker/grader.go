package docker

import (
	"context"
	"fmt"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"kubelab.dev/kubelab/internal/binaries"
	"kubelab.dev/kubelab/internal/fileid"
)

// graderDockerfile makes the image that grades one submission in a pod
// of a class cluster (`kubelab grade --on`): the kubelab binary and the
// components binary next to it, FROM scratch, plus a static busybox as
// /bin/sh and the usual tools, because exercise checks run `script`
// operations. kubelab runs the embedded backend inside the pod: no
// Docker, no privileges.
const graderDockerfile = `ARG BASE
FROM ${BASE} AS tools
RUN mkdir -p /out/bin /out/tmp /out/work && chmod 1777 /out/tmp && chmod 0777 /out/work && cp /bin/busybox /out/bin/busybox && \
    for a in $(/out/bin/busybox --list); do [ -e /out/bin/$a ] || ln -s busybox /out/bin/$a; done
FROM scratch
COPY --from=tools /out/ /
COPY kubelab /kubelab
COPY kubelab-components /kubelab-components
ENV PATH=/bin HOME=/work KUBELAB_HOME=/work/kubelab TMPDIR=/tmp
ENTRYPOINT ["/kubelab"]
`

// GraderImage is the reference `kubelab images build` gives the grader
// image of the kubelab binary bin. It depends only on the binaries and
// the image's recipe, so a class-grading run finds it without Docker.
func GraderImage(bin string) (string, error) {
	h, _, err := graderHash(bin)
	if err != nil {
		return "", err
	}
	return "kubelab/grader:" + h[:12], nil
}

// graderHash is the content hash of the grader image of bin (its recipe,
// base, and the build IDs of kubelab and of the components binary next
// to it), and that components binary.
func graderHash(bin string) (hash, comp string, err error) {
	if comp, err = binaries.MustComponents(bin); err != nil {
		return "", "", err
	}
	binHash, err := fileid.BuildHex(bin)
	if err != nil {
		return "", "", err
	}
	compHash, err := fileid.BuildHex(comp)
	if err != nil {
		return "", "", err
	}
	return hashStrings(graderDockerfile, baseImage(), binHash, compHash), comp, nil
}

// BuildGrader builds the grader image of bin (cached by content hash)
// and returns its reference.
func BuildGrader(ctx context.Context, bin string, progress func(string)) (string, error) {
	if progress == nil {
		progress = func(string) {}
	}
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return "", fmt.Errorf("docker: %w", err)
	}
	defer dc.Close()
	return buildGrader(ctx, dc.Client, bin, progress)
}

func buildGrader(ctx context.Context, cli *client.Client, bin string, progress func(string)) (string, error) {
	h, comp, err := graderHash(bin)
	if err != nil {
		return "", err
	}
	base, err := ensureBase(ctx, cli, progress)
	if err != nil {
		return "", err
	}
	ref := "kubelab/grader:" + h[:12]
	err = buildIfChanged(ctx, cli, ref, h, map[string]string{"Dockerfile": graderDockerfile},
		map[string]string{"kubelab": bin, "kubelab-components": comp}, progress, "BASE="+base)
	return ref, err
}
