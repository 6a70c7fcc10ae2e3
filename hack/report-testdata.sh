#!/usr/bin/env bash
# Regenerates report/testdata/labs.json (the JSON report of real lab runs
# that the HTML report's tests draw) and docs/report.png (the screenshot in
# the README, taken by the Chromium test). Needs bin/kubelab and chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
./bin/kubelab --home "$home" run labs/01-apply-to-running.yaml labs/02-etcd-leader-failover.yaml labs/04-scheduler-leader-failover.yaml \
  labs/17-scheduler-filter-score.yaml \
  --json report/testdata/labs.json
mkdir -p docs
KUBELAB_REPORT_SCREENSHOT="$PWD/docs/report.png" CGO_ENABLED=0 GOFLAGS=-trimpath go test ./report -run TestHTMLReportInChromium -count=1
