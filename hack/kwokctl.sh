#!/usr/bin/env bash
# kwokctl and kubelab side by side, on identical upstream code: builds
# kwokctl v0.8.0 outside this repository (it never enters go.mod), points
# its binary runtime at kubelab's own components
# (bin/kubelab-etcd component etcd, ..., through one-line wrappers),
# then boots the same clusters with both and prints one table: a minimal
# cluster (1 etcd, 1 apiserver, KCM, scheduler, 1 node) until it is usable (the node Ready and the default
# ServiceAccount made), its teardown until every process is gone, and,
# with --scale, N nodes Ready and M pods of one Deployment Running.
#
#   hack/kwokctl.sh [--runs 3] [--scale 1000,10000] [--heartbeat 5]
#
# Both run without observation (kwokctl has none): kubelab with
# --observe=false. Alternating runs, medians; the machine is shared by
# both, so compare ratios. The scale clusters of both multiply the nodes'
# heartbeat timings by the same factor: kwokctl's heartbeatFactor (its
# default, 5: Leases of 200 s) and kubelab's node Lease (a kubelet's 40 s)
# and grace period (50 s), through a topology file. Heartbeats are most
# of an idle simulated cluster's cost, so a comparison at different
# factors compares them and not the clusters.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=3
scale=""
heartbeat=5
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --heartbeat) heartbeat=$2; shift 2 ;;
    *) echo "usage: hack/kwokctl.sh [--runs N] [--scale NODES,PODS] [--heartbeat FACTOR]" >&2; exit 2 ;;
  esac
done
[ -x bin/kubelab ] || ./hack/build.sh
kubelab=$root/bin/kubelab
work=${KUBELAB_KWOKCTL_DIR:-${TMPDIR:-/tmp}/kubelab-kwokctl}
mkdir -p "$work/bin" "$work/wrap"

# kwokctl v0.8.0, built from the module proxy into a directory of its own.
if [ ! -x "$work/bin/kwokctl" ]; then
  echo "building kwokctl v0.8.0 into $work/bin (a few minutes the first time)" >&2
  (cd "$work" && GOBIN=$work/bin CGO_ENABLED=0 GOFLAGS=-trimpath go install sigs.k8s.io/kwok/cmd/kwokctl@v0.8.0)
fi
kwokctl=$work/bin/kwokctl

# The components kwokctl starts are kubelab's: the binaries embedded
# clusters run (one program each) and kubelab-kubectl.
for c in kube-apiserver kube-controller-manager kube-scheduler etcd kwok; do
  printf '#!/bin/sh\nexec %s component %s "$@"\n' "$root/bin/kubelab-${c#kube-}" "$c" > "$work/wrap/$c"
  chmod +x "$work/wrap/$c"
done
printf '#!/bin/sh\nexec %s "$@"\n' "$root/bin/kubelab-kubectl" > "$work/wrap/kubectl"
chmod +x "$work/wrap/kubectl"
cat > "$work/kwok.yaml" <<EOF
kind: KwokctlConfiguration
apiVersion: config.kwok.x-k8s.io/v1alpha1
options:
  runtime: binary
  kubeVersion: v1.37.2
  kubeApiserverBinary: $work/wrap/kube-apiserver
  kubeControllerManagerBinary: $work/wrap/kube-controller-manager
  kubeSchedulerBinary: $work/wrap/kube-scheduler
  kubectlBinary: $work/wrap/kubectl
  etcdBinary: $work/wrap/etcd
  kwokControllerBinary: $work/wrap/kwok
EOF
export KWOK_WORKDIR=$work/kwok-home
home=$work/kubelab-home

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }
# gone waits until no process of the given pattern is left.
gone() { while pgrep -f "$1" > /dev/null; do sleep 0.02; done; }
kc() { "$kubelab" kubectl --kubeconfig "$1" "${@:2}"; }
usable() { # KUBECONFIG NODES: a Ready node each and the default ServiceAccount
  until [ "$(kc "$1" get nodes --no-headers 2>/dev/null | grep -cw Ready)" -ge "$2" ] &&
        kc "$1" get serviceaccount default > /dev/null 2>&1; do sleep 0.05; done
}

kwok_up() { # NAME -> seconds to usable
  local t0; t0=$(now)
  "$kwokctl" create cluster --name "$1" --config "$work/kwok.yaml" > /dev/null 2>&1
  "$kwokctl" scale node --name "$1" --replicas 1 > /dev/null 2>&1
  usable "$KWOK_WORKDIR/clusters/$1/kubeconfig.yaml" 1
  secs "$t0" "$(now)"
}
kwok_down() {
  local t0; t0=$(now)
  "$kwokctl" delete cluster --name "$1" > /dev/null 2>&1
  gone "kwok-home/clusters/$1"
  secs "$t0" "$(now)"
}
lab_up() {
  local t0; t0=$(now)
  "$kubelab" up --home "$home" --name "$1" --observe=false > /dev/null 2>&1
  usable "$home/clusters/$1/admin.kubeconfig" 1
  secs "$t0" "$(now)"
}
lab_down() {
  local t0; t0=$(now)
  "$kubelab" down --home "$home" --name "$1" > /dev/null 2>&1
  gone "$home/clusters/$1/"
  secs "$t0" "$(now)"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# One untimed boot of each first: kubelab's first boot with a new build
# takes the seed every later boot restores (a user pays it once), and a
# --runs 1 comparison would otherwise time that one.
kwok_up warm > /dev/null; kwok_down warm > /dev/null
lab_up warm > /dev/null; lab_down warm > /dev/null

declare -a ku kd lu ld
for i in $(seq "$runs"); do
  ku+=("$(kwok_up "kw$i")"); kd+=("$(kwok_down "kw$i")")
  lu+=("$(lab_up "kl$i")"); ld+=("$(lab_down "kl$i")")
  echo "run $i: kwokctl usable ${ku[-1]}s down ${kd[-1]}s; kubelab usable ${lu[-1]}s down ${ld[-1]}s" >&2
done
m() { printf '%s\n' "$@" | median; }
{
  printf 'WHAT\tKWOKCTL s\tKUBELAB s\tRATIO\n'
  a=$(m "${ku[@]}"); b=$(m "${lu[@]}"); printf 'minimal usable (median of %d)\t%.2f\t%.2f\t%.2f\n' "$runs" "$a" "$b" "$(echo "$b / $a" | bc -l)"
  a=$(m "${kd[@]}"); b=$(m "${ld[@]}"); printf 'minimal teardown\t%.2f\t%.2f\t%.2f\n' "$a" "$b" "$(echo "$b / $a" | bc -l)"
} | column -t -s $'\t'

if [ -n "$scale" ]; then
  nodes=${scale%,*}; pods=${scale#*,}
  running() { # KUBECONFIG N: the Deployment's ready replicas (one GET; listing the pods every second would load both apiservers)
    until [ "$(kc "$1" get deployment scale -o jsonpath='{.status.readyReplicas}' 2>/dev/null)" = "$2" ]; do sleep 0.5; done
  }
  # cpu: CPU seconds (user and system) the cluster's components have
  # spent so far; both clusters run the same component processes.
  cpu() {
    local t=0 p f
    for p in $(pgrep -f "kubelab-(etcd|apiserver|controller-manager|scheduler|kwok) component "); do
      read -r -a f < <(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
      t=$((t + f[11] + f[12]))
    done
    echo "$t / $(getconf CLK_TCK)" | bc -l
  }
  scale_run() { # KUBECONFIG -> "nodes-ready-s pods-running-s cpu-ms-per-pod"
    local t0 t1 c0; t0=$(now)
    usable "$1" "$nodes"; t1=$(now); c0=$(cpu)
    kc "$1" create deployment scale --image=kubelab/http:dev --replicas="$pods" > /dev/null
    running "$1" "$pods"
    echo "$(secs "$t0" "$t1") $(secs "$t1" "$(now)") $(echo "($(cpu) - $c0) * 1000 / $pods" | bc -l)"
  }
  sed "s/^options:/options:\n  heartbeatFactor: $heartbeat/" "$work/kwok.yaml" > "$work/kwok-scale.yaml"
  printf 'timings:\n  nodeLeaseDuration: %ds\n  nodeMonitorGracePeriod: %ds\n' $((40 * heartbeat)) $((50 * heartbeat)) > "$work/kubelab-scale.yaml"
  "$kwokctl" create cluster --name kws --config "$work/kwok-scale.yaml" --disable-qps-limits > /dev/null 2>&1
  "$kwokctl" scale node --name kws --replicas "$nodes" > /dev/null 2>&1 &
  read -r kn kp kc_ < <(scale_run "$KWOK_WORKDIR/clusters/kws/kubeconfig.yaml")
  wait
  "$kwokctl" delete cluster --name kws > /dev/null 2>&1
  "$kubelab" up --home "$home" --name kls --observe=false --workers "$nodes" --config "$work/kubelab-scale.yaml" > /dev/null 2>&1 &
  until [ -f "$home/clusters/kls/admin.kubeconfig" ]; do sleep 0.05; done
  read -r ln lp lc < <(scale_run "$home/clusters/kls/admin.kubeconfig")
  wait
  "$kubelab" down --home "$home" --name kls > /dev/null 2>&1
  {
    printf 'WHAT\tKWOKCTL s\tKUBELAB s\tRATIO\n'
    printf '%d nodes Ready (heartbeat x%d)\t%.1f\t%.1f\t%.2f\n' "$nodes" "$heartbeat" "$kn" "$ln" "$(echo "$ln / $kn" | bc -l)"
    printf '%d pods Running\t%.1f\t%.1f\t%.2f\n' "$pods" "$kp" "$lp" "$(echo "$lp / $kp" | bc -l)"
    printf 'cluster CPU per pod while they start, in ms\t%.1f\t%.1f\t%.2f\n' "$kc_" "$lc" "$(echo "$lc / $kc_" | bc -l)"
  } | column -t -s $'\t'
fi
