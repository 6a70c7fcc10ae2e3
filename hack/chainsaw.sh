#!/usr/bin/env bash
# Runs Kyverno Chainsaw v0.2.12's own example tests (testdata/e2e/examples,
# with upstream's config and values files) against a 1-worker kubelab
# cluster, and prints the pass/fail counts.
#
#   hack/chainsaw.sh [embedded|docker]
#
# chainsaw v0.2.12 does not build on Go 1.26 as published: its
# internal TestDeps lacks the ModulePath method testing.MainStart now
# wants. The script builds it from the module, outside the repository,
# with that one method added. On docker, the examples' images (nginx,
# alpine), when the host has none of its own, are kubelab's HTTP app
# tagged with their names, put on the worker with `kubelab images load`
# (no registry is reachable).
set -euo pipefail
cd "$(dirname "$0")/.."
backend=${1:-embedded}
version=v0.2.12
kubelab=$PWD/bin/kubelab
[ -x "$kubelab" ] || ./hack/build.sh
work=${KUBELAB_CHAINSAW_DIR:-$(mktemp -d)}
name=chainsaw-$backend
export KUBELAB_HOME=$work/home
tagged=()
cleanup() {
  "$kubelab" down --name "$name" > /dev/null 2>&1 || true
  for img in "${tagged[@]}"; do docker rmi "$img" > /dev/null 2>&1 || true; done
}
trap cleanup EXIT

bin=$work/chainsaw
if [ ! -x "$bin" ]; then
  src=$(GOFLAGS=-mod=mod go mod download -json "github.com/kyverno/chainsaw@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rm -rf "$work/src" && cp -r "$src" "$work/src" && chmod -R u+w "$work/src"
  cat >> "$work/src/pkg/runner/internal/test_deps.go" <<'GO'

// ModulePath is part of testing's testDeps since Go 1.26.
func (*TestDeps) ModulePath() string { return "" }
GO
  echo "building chainsaw $version (first time: a few minutes)" >&2
  (cd "$work/src" && CGO_ENABLED=0 GOFLAGS= go build -o "$bin" .)
fi
src=$(GOFLAGS=-mod=mod go mod download -json "github.com/kyverno/chainsaw@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')

"$kubelab" up --name "$name" --backend "$backend" --workers 1
if [ "$backend" = docker ]; then
  # The host's own images of those names are used when it has them; tags
  # made here are removed at the end.
  for img in nginx:latest nginx:1.14.2 alpine:latest; do
    if ! docker image inspect "$img" > /dev/null 2>&1; then
      docker tag kubelab/http:dev "$img" && tagged+=("$img")
    fi
  done
  "$kubelab" images load --name "$name" nginx:latest nginx:1.14.2 alpine:latest
fi
export KUBECONFIG=$("$kubelab" kubeconfig --name "$name")
e2e=$src/testdata/e2e
status=0
# Upstream's config sets failFast, which would stop the run at the first
# failure (dynamic-clusters needs the kind CLI): off, to count every test.
(cd "$e2e" && "$bin" test ./examples --remarshal --config ./config.yaml --values ./values.yaml --fail-fast=false) > "$work/chainsaw-$backend.log" 2>&1 || status=$?
passed=$(grep -c -- '--- PASS: chainsaw/' "$work/chainsaw-$backend.log" || true)
failed=$(grep -c -- '--- FAIL: chainsaw/' "$work/chainsaw-$backend.log" || true)
skipped=$(grep -c -- '--- SKIP: chainsaw/' "$work/chainsaw-$backend.log" || true)
grep -- '--- FAIL: chainsaw/' "$work/chainsaw-$backend.log" || true
echo "chainsaw $version examples on the $backend backend: $passed passed, $failed failed, $skipped skipped by upstream (log: $work/chainsaw-$backend.log)"
exit $status
