#!/usr/bin/env bash
# Builds bin/kubelab, kubelab's command line, and next to it the real
# Kubernetes v1.37.2, etcd v3.7.3 and kwok components as static binaries:
# bin/kubelab-components (every component, kubectl and etcdctl: what
# `kubelab component`, `kubelab kubectl` and the docker images run) and
# bin/kubelab-etcd, -apiserver, -controller-manager, -scheduler and -kwok
# (one program each: what embedded clusters run) and bin/kubelab-kubectl
# (kubectl alone). The command line
# links none of them, so each kubelab command starts in a fraction of the
# time. The first (cold) build
# compiles all of Kubernetes: ~15 minutes and ~3.5 GB of RAM on 2 cores;
# after that Go's build cache makes it a few tens of seconds (the links).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bin/kubelab}
K8S=v1.37.2
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $p.gitVersion=$K8S -X $p.gitMajor=1 -X $p.gitMinor=37 -X $p.gitTreeState=clean -X $p.buildDate=2026-11-29T00:00:00Z"
done
if [ -z "$(ls -A "$(go env GOCACHE)" 2>/dev/null)" ] || [ -n "${KUBELAB_BUILD_VERBOSE:-}" ]; then
  echo "building $out (first build compiles Kubernetes: ~14 min on 2 cores)" >&2
fi
start=$(date +%s)
# The browser view's front end (xterm.js and its fit addon, pinned by
# ui/web/package-lock.json): its dist files go to ui/web/dist, which the
# ui package embeds; nothing is fetched by the page at run time.
if ! command -v npm > /dev/null; then
  echo "npm not found: kubelab ui will have no terminal (install npm and run hack/build.sh again)" >&2
elif ! (cd ui/web && npm ci --no-audit --no-fund --loglevel=error > /dev/null); then
  echo "npm ci failed in ui/web: kubelab ui will have no terminal (run hack/build.sh again once npm's registry answers)" >&2
else
  cp ui/web/node_modules/@xterm/xterm/lib/xterm.js ui/web/node_modules/@xterm/xterm/css/xterm.css \
    ui/web/node_modules/@xterm/addon-fit/lib/addon-fit.js ui/web/dist/
fi
# -buildvcs=auto: kubelab version names the commit (some Go setups turn
# VCS stamping off; auto still builds outside a git checkout).
CGO_ENABLED=0 go build -trimpath -buildvcs=auto -ldflags "$ld" -o "$out" ./cmd/kubelab
# Every component, for `kubelab component`, kubectl, etcdctl and the
# docker backend's images (see internal/binaries).
CGO_ENABLED=0 go build -trimpath -buildvcs=auto -ldflags "$ld" -o "$(dirname "$out")/kubelab-components" ./cmd/kubelab-components
# kubectl alone, for `kubelab kubectl` and the kubectl of labs' steps and
# scripts: it starts in half the time of kubelab-components.
CGO_ENABLED=0 go build -trimpath -buildvcs=auto -ldflags "$ld" -o "$(dirname "$out")/kubelab-kubectl" ./cmd/kubelab-kubectl
# One program each, for the processes of embedded clusters: each
# initialises its own program's packages only (see internal/components).
for p in etcd apiserver controller-manager scheduler kwok; do
  CGO_ENABLED=0 go build -trimpath -buildvcs=auto -ldflags "$ld" -o "$(dirname "$out")/kubelab-$p" ./cmd/kubelab-$p
done
# The workload images of the docker backend (pause sandbox, HTTP app, the
# CoreDNS of the cluster DNS addon).
for img in pause http coredns; do
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$(dirname "$out")/kubelab-$img" ./images/$img
done
echo "built $out in $(( $(date +%s) - start ))s" >&2
