package docker

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"kubelab.dev/kubelab/internal/binaries"
	"kubelab.dev/kubelab/internal/fileid"
)

//go:embed files
var files embed.FS

// Debian packages of the node image (containerd, runc, CNI plugins,
// iptables and nftables for kube-proxy's two modes, HAProxy for the load
// balancer; busybox-static
// is the shell and tools of the grader image, see grader.go).
var nodePackages = []string{
	"containerd", "runc", "containernetworking-plugins", "iptables", "iproute2", "ca-certificates",
	"procps", "conntrack", "mount", "util-linux", "kmod", "socat", "tini", "haproxy", "iputils-ping", "curl",
	"busybox-static", "nftables",
}

const (
	labelHash     = "dev.kubelab.content-hash"
	debianSuite   = "bookworm"
	debianMirror  = "http://deb.debian.org/debian"
	workloadPause = "kubelab/pause:3.10"
	workloadHTTP  = "kubelab/http:dev"
	// workloadDNS is controlplane.DNSImage, the DNS addon's pods.
	workloadDNS = "kubelab/coredns:dev"
)

// Images are the image references a docker cluster runs.
type Images struct {
	Node     string // workers and the load balancer (Debian, containerd, HAProxy)
	Kubelab  string // control-plane components, FROM scratch
	Pause    string
	HTTP     string
	Progress func(string)
}

// BuildImages makes every image the docker backend needs, skipping those
// whose content hash label says they are up to date. bin is the kubelab
// binary; the components, pause, http and coredns binaries are expected
// next to it (hack/build.sh builds them all). The images hold the
// components binary as /kubelab: the command line is not needed there.
func BuildImages(ctx context.Context, cli *client.Client, bin string, progress func(string)) (Images, error) {
	if progress == nil {
		progress = func(string) {}
	}
	bin = binaries.ComponentsOf(bin)
	imgs := Images{Progress: progress}
	// Content hashes are the binaries' Go build IDs: read from a note, not
	// the whole file, as every boot checks them.
	binHash, err := fileid.BuildHex(bin)
	if err != nil {
		return imgs, err
	}
	dir := filepath.Dir(bin)

	// Workload images FROM scratch, loaded into the node image as
	// tarballs.
	type workload struct{ ref, bin, hash string }
	workloads := []*workload{{ref: workloadPause, bin: "kubelab-pause"}, {ref: workloadHTTP, bin: "kubelab-http"}, {ref: workloadDNS, bin: "kubelab-coredns"}}
	var workloadHashes []string
	for _, w := range workloads {
		p := filepath.Join(dir, w.bin)
		if w.hash, err = fileid.BuildHex(p); err != nil {
			return imgs, fmt.Errorf("workload binary %s (run hack/build.sh): %w", p, err)
		}
		df := fmt.Sprintf("FROM scratch\nCOPY %s /%s\nENTRYPOINT [\"/%s\"]\n", w.bin, w.bin, w.bin)
		if err := buildIfChanged(ctx, cli, w.ref, w.hash, map[string]string{"Dockerfile": df}, map[string]string{w.bin: p}, progress); err != nil {
			return imgs, err
		}
		workloadHashes = append(workloadHashes, w.ref, w.hash)
	}
	imgs.Pause, imgs.HTTP = workloadPause, workloadHTTP

	// Control-plane image: the components binary FROM scratch.
	imgs.Kubelab = "kubelab/kubelab:" + binHash[:12]
	df := "FROM scratch\nCOPY kubelab /kubelab\nENTRYPOINT [\"/kubelab\"]\n"
	if err := buildIfChanged(ctx, cli, imgs.Kubelab, binHash, map[string]string{"Dockerfile": df}, map[string]string{"kubelab": bin}, progress); err != nil {
		return imgs, err
	}

	base, err := ensureBase(ctx, cli, progress)
	if err != nil {
		return imgs, err
	}

	// Node image: base + kubelab + init script + configs + workload
	// images. Its hash follows the workload images' hashes, so their
	// tarballs are saved only when it is built.
	ctxFiles := map[string]string{}
	for _, name := range nodeFiles {
		b, _ := files.ReadFile("files/" + name)
		ctxFiles[name] = string(b)
	}
	nodeHash := nodeImageHash(ctxFiles, base, binHash, workloadHashes...)
	imgs.Node = "kubelab/node:" + nodeHash[:12]
	if upToDate(ctx, cli, imgs.Node, nodeHash) {
		return imgs, nil
	}
	for _, w := range workloads {
		rc, err := cli.ImageSave(ctx, []string{w.ref})
		if err != nil {
			return imgs, fmt.Errorf("save %s: %w", w.ref, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return imgs, fmt.Errorf("save %s: %w", w.ref, err)
		}
		ctxFiles["images/"+strings.NewReplacer("/", "-", ":", "-").Replace(w.ref)+".tar"] = string(b)
	}
	ctxFiles["Dockerfile"] = ctxFiles["Dockerfile.node"]
	if err := buildIfChanged(ctx, cli, imgs.Node, nodeHash, ctxFiles, map[string]string{"kubelab": bin}, progress, "BASE="+base); err != nil {
		return imgs, err
	}
	// A new build's images: those of builds before the last go.
	if n := pruneImages(ctx, cli, imgs.Kubelab, imgs.Node); n > 0 {
		progress(fmt.Sprintf("removed %d image(s) of earlier kubelab builds", n))
	}
	return imgs, nil
}

// baseImage is the node base image's reference: a Debian rootfs made by
// debootstrap (no registry to pull from), named by its suite and packages.
func baseImage() string {
	return "kubelab/node-base:" + hashStrings(append([]string{debianSuite}, nodePackages...)...)[:12]
}

// ensureBase makes the node base image unless it exists.
func ensureBase(ctx context.Context, cli *client.Client, progress func(string)) (string, error) {
	base := baseImage()
	if !imageExists(ctx, cli, base) {
		if err := debootstrapImport(ctx, cli, base, progress); err != nil {
			return "", err
		}
	}
	return base, nil
}

// nodeFiles are the files of the node image's build context.
var nodeFiles = []string{"Dockerfile.node", "node-init.sh", "daemons.sh", "containerd.toml", "cni.template"}

// nodeImageHash is the content hash of the node image: its build
// context's files (name and content, in name order: a map's iteration
// order must not change the hash), its base image, the kubelab binary and
// the workload images (reference and hash pairs).
func nodeImageHash(ctxFiles map[string]string, base, binHash string, workloads ...string) string {
	names := make([]string, 0, len(ctxFiles))
	for n := range ctxFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, 2*len(names)+2)
	for _, n := range names {
		parts = append(parts, n, hashStrings(ctxFiles[n]))
	}
	return hashStrings(append(append(parts, base, binHash), workloads...)...)
}

func imageExists(ctx context.Context, cli *client.Client, ref string) bool {
	_, err := cli.ImageInspect(ctx, ref)
	return err == nil
}

// upToDate says whether an image ref exists with the content hash.
func upToDate(ctx context.Context, cli *client.Client, ref, hash string) bool {
	res, err := cli.ImageInspect(ctx, ref)
	return err == nil && res.Config != nil && res.Config.Labels[labelHash] == hash
}

// buildIfChanged builds ref from an in-memory context unless an image
// with that reference and content hash exists.
func buildIfChanged(ctx context.Context, cli *client.Client, ref, hash string, inline, onDisk map[string]string, progress func(string), buildArgs ...string) error {
	if upToDate(ctx, cli, ref, hash) {
		return nil
	}
	progress("building image " + ref)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, b []byte, mode int64) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(b))}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	for _, name := range sortedKeys(inline) {
		content := inline[name]
		mode := int64(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := add(name, []byte(content), mode); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(onDisk) {
		b, err := os.ReadFile(onDisk[name])
		if err != nil {
			return err
		}
		if err := add(name, b, 0o755); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	args := map[string]*string{}
	for _, a := range buildArgs {
		k, v, _ := strings.Cut(a, "=")
		args[k] = &v
	}
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{
		Tags: []string{ref}, Remove: true, ForceRemove: true, BuildArgs: args,
		Labels: map[string]string{labelHash: hash, labelManaged: "true"},
	})
	if err != nil {
		return fmt.Errorf("build %s: %w", ref, err)
	}
	defer res.Body.Close()
	return buildStream(res.Body, ref)
}

// buildStream drains the build's JSON stream and returns its error, if any.
func buildStream(r io.Reader, ref string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var last string
	for sc.Scan() {
		var m struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			if m.Error != "" {
				return fmt.Errorf("build %s: %s (after: %s)", ref, m.Error, strings.TrimSpace(last))
			}
			if s := strings.TrimSpace(m.Stream); s != "" {
				last = s
			}
		}
	}
	return sc.Err()
}

// debootstrapImport makes a minimal Debian rootfs with the node packages
// and imports it as an image.
func debootstrapImport(ctx context.Context, cli *client.Client, ref string, progress func(string)) error {
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return errors.New("the node image needs debootstrap (apt-get install debootstrap): no registry is reachable to pull a base image")
	}
	dir, err := os.MkdirTemp("", "kubelab-rootfs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	progress("debootstrap " + debianSuite + " with " + strings.Join(nodePackages, ","))
	cmd := exec.CommandContext(ctx, "debootstrap", "--variant=minbase", "--include="+strings.Join(nodePackages, ","), debianSuite, dir, debianMirror)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("debootstrap: %w\n%s", err, tailString(string(out), 20))
	}
	// Trim what a node never needs.
	for _, p := range []string{"usr/share/doc", "usr/share/man", "usr/share/locale", "var/cache/apt/archives", "var/lib/apt/lists"} {
		_ = os.RemoveAll(filepath.Join(dir, p))
	}
	progress("importing " + ref)
	tarCmd := exec.CommandContext(ctx, "tar", "-C", dir, "-c", ".")
	out, err := tarCmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := tarCmd.Start(); err != nil {
		return err
	}
	rc, err := cli.ImageImport(ctx, client.ImageImportSource{Source: out, SourceName: "-"}, ref, client.ImageImportOptions{
		Changes: []string{"LABEL " + labelManaged + "=true"},
	})
	if err != nil {
		_ = tarCmd.Wait()
		return fmt.Errorf("import %s: %w", ref, err)
	}
	_, _ = io.Copy(io.Discard, rc)
	rc.Close()
	if err := tarCmd.Wait(); err != nil {
		return fmt.Errorf("tar rootfs: %w", err)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func hashStrings(ss ...string) string {
	h := sha256.New()
	for _, s := range ss {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func tailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Build connects to the Docker engine and runs BuildImages.
func Build(ctx context.Context, bin string, progress func(string)) (Images, error) {
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return Images{}, fmt.Errorf("docker: %w", err)
	}
	defer dc.Close()
	return BuildImages(ctx, dc.Client, bin, progress)
}
