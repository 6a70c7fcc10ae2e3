#!/usr/bin/env bash
# Runs upstream Kubernetes' conformance tests (the [Conformance] specs of
# k8s.io/kubernetes/test/e2e at the version kubelab carries) on a kubelab
# cluster, and prints a summary: passed, failed, skipped, by SIG, and each
# failure with its first error line.
#
#   hack/conformance.sh [docker|embedded] [--focus REGEX] [--skip REGEX] [--procs N] [--serial]
#
# docker (the default) boots a docker cluster (real kubelets and
# containerd) and runs every [Conformance] spec that is neither [Serial]
# nor [Disruptive]; --serial runs those on their own, one at a time.
# embedded boots kwok-simulated nodes, where no container runs, and runs
# the specs that need none: the "run" lines of
# hack/conformance/embedded-subset.txt, which says for every other spec
# what it needs. --focus and --skip (regular expressions over spec names)
# narrow the conformance specs; they never add others.
#
# Everything is built here, offline:
# - the e2e test binary and ginkgo, in a module outside the repository
#   (they would add ~40 modules to go.mod), cached under
#   $KUBELAB_CONFORMANCE_DIR (default ~/.cache/kubelab/conformance);
# - the images the specs use (test/utils/image/manifest.go): agnhost from
#   its upstream source, busybox, nginx, the DNS testing image and the
#   few others from Debian packages (no registry is reachable). They are
#   named under kubelab.local through the e2e framework's
#   KUBE_TEST_REPO_LIST, and put on the workers with `kubelab images load`.
#   sample-apiserver is built at v0.29.2, the version of upstream's image.
#
# Results (JUnit, the e2e log, summary.txt) go to $KUBELAB_CONFORMANCE_OUT
# (default: a new directory under /tmp, printed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
backend=docker
focus='\[Conformance\]'
skip=''
procs=4
serial=0
while [ $# -gt 0 ]; do
  case "$1" in
    docker|embedded) backend=$1 ;;
    --focus) focus=$2; shift ;;
    --focus=*) focus=${1#*=} ;;
    --skip) skip=$2; shift ;;
    --skip=*) skip=${1#*=} ;;
    --procs) procs=$2; shift ;;
    --procs=*) procs=${1#*=} ;;
    --serial) serial=1 ;;
    *) echo "hack/conformance.sh: unknown argument $1 (want docker, embedded, --focus REGEX, --skip REGEX, --procs N, --serial)" >&2; exit 2 ;;
  esac
  shift
done

K8S=v1.37.2
kubelab=${KUBELAB_BIN:-$repo/bin/kubelab}
[ -x "$kubelab" ] || ./hack/build.sh
cache=${KUBELAB_CONFORMANCE_DIR:-$HOME/.cache/kubelab/conformance}/$K8S
out=${KUBELAB_CONFORMANCE_OUT:-$(mktemp -d /tmp/kubelab-conformance-XXXXXX)}
mkdir -p "$cache" "$out"
name=conformance-$backend
export KUBELAB_HOME=${KUBELAB_HOME:-$out/home}
# The e2e binary leaves temporary files behind (kubectl's kuberc specs make
# a test-kuberc* directory whenever the binary builds its spec tree, a dry
# run included, and never remove it): everything this script runs gets a
# TMPDIR of its own, removed with the cluster.
e2etmp=$(mktemp -d /tmp/kubelab-e2e-tmp-XXXXXX)
export TMPDIR=$e2etmp
cleanup() {
  "$kubelab" down --name "$name" > /dev/null 2>&1 || true
  rm -rf "$e2etmp"
}
trap cleanup EXIT

# Two runs at once (the tests run the docker and embedded subsets side by
# side) share the cache: one builds what is missing while the other waits
# on the lock, released before the cluster boots.
exec 9> "$cache/.lock"
flock 9

# --- the e2e binary and ginkgo ---------------------------------------------
build_e2e() {
  local src=$cache/src
  mkdir -p "$src"
  {
    printf 'module kubelab.dev/conformance\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\n' "$K8S"
    # kubelab's pins, less its replaces by local directories (third_party).
    sed -n '/^replace/,$p' "$repo/go.mod" | grep -v '=> \./'
  } > "$src/go.mod"
  cat > "$src/tools.go" <<'GO'
//go:build tools

// Package conformance pins the upstream e2e suite and ginkgo.
package conformance

import (
	_ "github.com/onsi/ginkgo/v2/ginkgo"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/test/e2e"
)
GO
  echo "building the e2e test binary $K8S (first time: ~10 minutes on 2 cores)" >&2
  local ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S -X $p.gitMajor=1 -X $p.gitMinor=37 -X $p.gitTreeState=clean"
  done
  # etcd for the Aggregator spec's sample-apiserver pod: upstream's
  # server main (etcdmain), at the version Kubernetes requires.
  mkdir -p "$src/cmd/etcd"
  cat > "$src/cmd/etcd/main.go" <<'GO'
// Command etcd is upstream etcd's server (etcdmain), for the image the
// e2e Aggregator spec runs beside its sample-apiserver.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  (cd "$src" && GOFLAGS=-mod=mod go mod tidy > /dev/null 2>&1 &&
    CGO_ENABLED=0 GOFLAGS=-mod=mod go test -c -trimpath -ldflags "$ld" -o "$cache/e2e.test.new" k8s.io/kubernetes/test/e2e &&
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o "$cache/ginkgo" github.com/onsi/ginkgo/v2/ginkgo &&
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ld" -o "$cache/kubectl" k8s.io/kubernetes/cmd/kubectl &&
    mkdir -p "$cache/images" &&
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$cache/images/etcd" ./cmd/etcd)
  mv "$cache/e2e.test.new" "$cache/e2e.test"
  # The sample-apiserver at the version of upstream's image (1.29.2), in
  # a module of its own with that release's replace directives: the
  # Aggregator spec's RBAC is written for it (v0.37.2's never turns ready
  # under it: /readyz 500).
  local sa=$cache/sample-apiserver
  mkdir -p "$sa"
  local mod
  mod=$(GOFLAGS=-mod=mod go mod download -json k8s.io/sample-apiserver@v0.29.2 | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  { printf 'module kubelab.dev/sampleapiserver\n\ngo 1.22\n\nrequire k8s.io/sample-apiserver v0.29.2\n\n'; sed -n '/^replace (/,/^)/p' "$mod"; } > "$sa/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/sample-apiserver/pkg/cmd/server"\n' > "$sa/tools.go"
  (cd "$sa" && GOFLAGS=-mod=mod go mod tidy > /dev/null 2>&1 &&
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$cache/images/sample-apiserver" k8s.io/sample-apiserver)
}
# The specs run this kubectl (--kubectl-path), of the same version.
[ -x "$cache/e2e.test" ] && [ -x "$cache/ginkgo" ] && [ -x "$cache/images/sample-apiserver" ] && [ -x "$cache/images/etcd" ] &&
  [ "$("$cache/kubectl" version --client 2> /dev/null | head -1)" = "Client Version: $K8S" ] || build_e2e

# --- images -----------------------------------------------------------------
# The registry names the e2e framework gives its images (manifest.go's
# RegistryList), all under kubelab.local: nothing is pulled.
reg=kubelab.local
cat > "$cache/repo-list.yaml" <<EOF
promoterE2eRegistry: $reg/e2e-test-images
buildImageRegistry: $reg/build-image
gcEtcdRegistry: $reg
gcRegistry: $reg
sigStorageRegistry: $reg/sig-storage
dockerLibraryRegistry: $reg/library
cloudProviderGcpRegistry: $reg/cloud-provider-gcp
EOF
e2e=$reg/e2e-test-images
# Images a spec runs, as the manifest of this version names them.
images=(
  "$e2e/agnhost:2.66.1" "$e2e/agnhost:2.55" "$e2e/busybox:1.37.0-2"
  "$e2e/nginx:1.27.0-2" "$e2e/nginx:1.28.0-2" "$e2e/glibc-dns-testing:2.1.1"
  "$e2e/nonroot:1.5" "$e2e/nonewprivs:1.4" "$e2e/kitten:1.8" "$e2e/nautilus:1.8" "$reg/pause:3.10.2"
  "$e2e/sample-apiserver:1.29.2" "$reg/etcd:3.7.0-0"
)

# Embedded nodes run no container: they need no image.
if [ "$backend" = docker ]; then
# e2e-base: a Debian rootfs with the tools the specs run in their
# containers (curl, dig, nc, ip, nginx); upstream's agnhost is Alpine
# with the same tools. trixie, for its busybox 1.37 (the version the
# manifest names): bookworm's 1.35 shell drops environment variables
# whose names are not shell names ("data-1"), which specs read back.
base=$reg/e2e-base:trixie
if ! docker image inspect "$base" > /dev/null 2>&1; then
  command -v debootstrap > /dev/null || { echo "hack/conformance.sh needs debootstrap (apt-get install -y debootstrap)" >&2; exit 1; }
  rootfs=$(mktemp -d /tmp/kubelab-e2e-rootfs-XXXXXX)
  echo "debootstrap of the e2e images' base (once: about a minute)" >&2
  debootstrap --variant=minbase --include=busybox-static,curl,bind9-dnsutils,netcat-openbsd,iproute2,iputils-ping,socat,nginx,procps,ca-certificates \
    trixie "$rootfs" http://deb.debian.org/debian > "$out/debootstrap.log" 2>&1
  rm -rf "$rootfs"/usr/share/doc "$rootfs"/usr/share/man "$rootfs"/usr/share/locale "$rootfs"/var/cache/apt/archives "$rootfs"/var/lib/apt/lists
  tar -C "$rootfs" -c . | docker import - "$base" > /dev/null
  rm -rf "$rootfs"
fi

# agnhost from the upstream source of this version.
src=$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
ctx=$cache/images
mkdir -p "$ctx"
for img in agnhost nonewprivs; do
  if [ ! -x "$ctx/$img" ]; then
    echo "building $img from k8s.io/kubernetes@$K8S/test/images/$img" >&2
    (cd "$cache/src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$ctx/$img" "k8s.io/kubernetes/test/images/$img")
  fi
done
cp "$src"/test/images/agnhost/porter/localhost.crt "$src"/test/images/agnhost/porter/localhost.key "$ctx/"
cp "$src"/test/images/kitten/html/kitten.jpg "$src"/test/images/nautilus/html/nautilus.jpg "$ctx/"
cp "$src"/test/images/kitten/html/data.json "$ctx/kitten.json"
cp "$src"/test/images/nautilus/html/data.json "$ctx/nautilus.json"
chmod -R u+w "$ctx"

# build REF DOCKERFILE: builds unless the image exists with the same
# Dockerfile, context and parent image (a label holds their hash), so an
# image is rebuilt when the one it is FROM was, and only then.
ctxsum=$( (cat "$ctx"/agnhost "$ctx"/nonewprivs "$ctx"/etcd "$ctx"/sample-apiserver "$ctx"/*.jpg "$ctx"/*.json "$ctx"/localhost.*; docker image inspect -f '{{.Id}}' "$base") | sha256sum)
build() {
  local ref=$1 df=$2 sum parent
  parent=$(docker image inspect -f '{{.Id}}' "$(printf '%s\n' "$df" | sed -n '1s/^FROM //p')")
  sum=$(printf '%s\n%s\n%s' "$df" "$ctxsum" "$parent" | sha256sum | cut -c1-16)
  if [ "$(docker image inspect -f '{{index .Config.Labels "dev.kubelab.e2e"}}' "$ref" 2>/dev/null)" = "$sum" ]; then
    return
  fi
  printf '%s\nLABEL dev.kubelab.e2e=%s\n' "$df" "$sum" > "$ctx/Dockerfile"
  docker build -q -t "$ref" "$ctx" > /dev/null
}
# busybox: the base with every busybox applet in /bin, as upstream's
# busybox image has them (specs run /bin/sysctl): Debian's command where
# it has one elsewhere, else busybox's (wget, ...); and bash as sh. Debian's shells,
# busybox's ash included, drop environment variables whose names are
# not shell names ("data-1") before running a command; specs read those
# back with `sh -c env`, and bash passes them on.
build "$e2e/busybox:1.37.0-2" "FROM $base
RUN ln -sf bash /bin/sh && for a in \$(busybox --list); do [ -e \"/bin/\$a\" ] && continue; p=\$(command -v \"\$a\"); case \"\$p\" in /*) ;; *) p=/bin/busybox ;; esac; ln -s \"\$p\" \"/bin/\$a\"; done
CMD [\"sh\"]"
build "$e2e/agnhost:2.66.1" "FROM $e2e/busybox:1.37.0-2
COPY agnhost /agnhost
COPY localhost.crt localhost.key /
RUN ln -s agnhost /agnhost-2 && mkdir /uploads && groupadd -g 50000 group-defined-in-image && useradd -u 1000 -M -G group-defined-in-image user-defined-in-image
EXPOSE 80 8080 8081 9376 5000
ENTRYPOINT [\"/agnhost\"]
CMD [\"pause\"]"
docker tag "$e2e/agnhost:2.66.1" "$e2e/agnhost:2.55"
build "$e2e/nginx:1.27.0-2" "FROM $e2e/busybox:1.37.0-2
RUN sed -i 's/^user www-data;/user root;/' /etc/nginx/nginx.conf && mkdir -p /usr/share/nginx/html && echo '<h1>nginx</h1>' > /usr/share/nginx/html/index.html && sed -i 's|root /var/www/html;|root /usr/share/nginx/html;|' /etc/nginx/sites-available/default && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD [\"nginx\", \"-g\", \"daemon off;\"]"
docker tag "$e2e/nginx:1.27.0-2" "$e2e/nginx:1.28.0-2"
build "$e2e/glibc-dns-testing:2.1.1" "FROM $e2e/busybox:1.37.0-2
CMD [\"sleep\", \"infinity\"]"
build "$e2e/nonroot:1.5" "FROM $e2e/busybox:1.37.0-2
USER 1234"
build "$e2e/nonewprivs:1.4" "FROM $e2e/busybox:1.37.0-2
COPY nonewprivs /usr/local/bin/nnp
RUN chmod +s /usr/local/bin/nnp
CMD [\"nnp\"]"
build "$e2e/kitten:1.8" "FROM $e2e/agnhost:2.66.1
COPY kitten.jpg /kitten.jpg
COPY kitten.json /data.json
CMD [\"test-webserver\"]"
build "$e2e/nautilus:1.8" "FROM $e2e/agnhost:2.66.1
COPY nautilus.jpg /nautilus.jpg
COPY nautilus.json /data.json
CMD [\"test-webserver\"]"

build "$e2e/sample-apiserver:1.29.2" "FROM $e2e/busybox:1.37.0-2
COPY sample-apiserver /sample-apiserver
ENTRYPOINT [\"/sample-apiserver\"]"
build "$reg/etcd:3.7.0-0" "FROM $e2e/busybox:1.37.0-2
COPY etcd /usr/local/bin/etcd
CMD [\"/usr/local/bin/etcd\"]"

fi

exec 9>&-

# --- the cluster --------------------------------------------------------------
"$kubelab" up --name "$name" --backend "$backend" --workers 2
if [ "$backend" = docker ]; then
  docker tag kubelab/pause:3.10 "$reg/pause:3.10.2"
  "$kubelab" images load --name "$name" "${images[@]}"
fi
kubeconfig=$("$kubelab" kubeconfig --name "$name")

# --- the run ------------------------------------------------------------------
# Conformance specs carry that label, and [Serial] and [Disruptive]
# ones those: --focus narrows the conformance specs, never adds others.
labels='Conformance && !Serial && !Disruptive'
if [ "$serial" = 1 ]; then
  labels='Conformance && (Serial || Disruptive)'
  procs=1
fi
if [ "$backend" = embedded ]; then
  # The subset: every "run" spec of the list that --focus matches, each
  # name as a literal followed by its [Conformance] tag. A dry run checks
  # that each name is still a spec of this e2e binary.
  list=$repo/hack/conformance/embedded-subset.txt
  names=$(grep -P '^run\t' "$list" | cut -f2 | sed 's/$/ [Conformance]/')
  exact() { sed -e 's/[][\.*^$()+?{}|]/\\&/g' | paste -sd'|'; }
  want=$(printf '%s\n' "$names" | wc -l)
  found=$("$cache/e2e.test" --ginkgo.dry-run --ginkgo.focus="$(printf '%s\n' "$names" | exact)" --ginkgo.no-color --ginkgo.v --kubeconfig=/dev/null 2>/dev/null | grep -c '^\[sig-' || true)
  if [ "$found" != "$want" ]; then
    echo "$list names $want specs to run; the e2e binary of $K8S has $found of them" >&2
    exit 1
  fi
  focus=$(printf '%s\n' "$names" | { grep -P -- "$focus" || true; } | exact)
  [ -n "$focus" ] || { echo "no spec of the embedded subset matches --focus" >&2; exit 2; }
fi
echo "running conformance specs: ${focus:0:200} (labels: $labels, skip: $skip, procs: $procs; results in $out)" >&2
start=$(date +%s)
status=0
KUBE_TEST_REPO_LIST=$cache/repo-list.yaml "$cache/ginkgo" --procs="$procs" --timeout=6h --no-color \
  --focus="$focus" --skip="$skip" --label-filter="$labels" --junit-report=junit.xml --output-dir="$out" \
  "$cache/e2e.test" -- --kubeconfig="$kubeconfig" --kubectl-path="$cache/kubectl" --provider=skeleton --report-dir="$out" \
  > "$out/e2e.log" 2>&1 || status=$?
took=$(( $(date +%s) - start ))
go run ./hack/junitsummary -took "${took}s" -backend "$backend" "$out/junit.xml" | tee "$out/summary.txt"
echo "results: $out (e2e log: $out/e2e.log)" >&2
exit $status
