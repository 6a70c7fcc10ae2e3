#!/bin/sh
# Prepares a kubelab worker container (mounts, cgroups, host-safe sysctls),
# starts containerd (its store holds the preloaded images: Dockerfile.node),
# then kube-proxy and the kubelet. Each daemon runs under a supervisor
# (daemons.sh) that restarts it when it exits and holds it down while the
# backend asks (kill|stop|start worker-N/kubelet), so a daemon can die
# without its node.
# Arguments: none; KUBELET_ARGS and KUBE_PROXY_ARGS come from the
# environment.
set -eu
log() { echo "kubelab-node: $*"; }
. /usr/local/lib/kubelab/daemons.sh

mount --make-rshared /
mount -o remount,rw /sys 2>/dev/null || true
for d in /sys/fs/cgroup /sys/fs/cgroup/*; do
  [ -d "$d" ] && mount -o remount,bind,rw "$d" 2>/dev/null || true
done
[ -e /dev/kmsg ] || mknod /dev/kmsg c 1 11
[ -s /etc/machine-id ] || tr -d - < /proc/sys/kernel/random/uuid > /etc/machine-id

# Host safety: /proc/sys/kernel and /proc/sys/vm are the host's. The kubelet
# checks six of them (protectKernelDefaults: true: it never writes); cover
# each with a file holding the value it expects, then make /proc/sys
# read-only except net (per network namespace, so ours).
mount -o remount,rw /proc/sys   # Docker mounts it read-only
mkdir -p /run/kubelab/sysctl
for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
          kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
  k=${kv%%=*}; v=${kv#*=}; f=/run/kubelab/sysctl/$(echo "$k" | tr / _)
  echo "$v" > "$f"
  mount --bind "$f" "/proc/sys/$k"
done
echo 1 > /proc/sys/net/ipv4/ip_forward
echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || true
mount --rbind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
mount --bind /proc/sys/net /proc/sys/net
mount -o remount,bind,rw /proc/sys/net

# Pod traffic to anything outside the pod network (CoreDNS, the control
# plane) leaves with the node's address, so replies find their way back.
iptables -t nat -A POSTROUTING -s 10.240.0.0/12 ! -d 10.240.0.0/12 -j MASQUERADE

# The Service network exists only in kube-proxy's DNAT rules: a pod's
# packet still addressed to it (a port no Service has) is refused here,
# where a real network's routers would drop it, instead of leaving the
# machine, whose own network may answer it (upstream's conformance spec
# "Services should serve endpoints on same port and different protocols"
# got an HTTP answer from this host's network on a removed port).
iptables -A FORWARD -d 10.96.0.0/16 -j REJECT

mkdir -p /run/containerd /var/lib/kubelet /etc/cni/net.d "$KUBELAB_DAEMONS"

# Stopping the node (tini passes SIGTERM to the whole process group): the
# supervisors go, and each daemon gets up to 20 s to exit (as the kubelet
# had when it ran in the foreground).
supervisors=
stop_node() {
  trap - TERM INT
  kill $supervisors 2> /dev/null || true
  for n in kubelet kube-proxy containerd; do (daemonctl stop "$n") & done
  wait
  exit 0
}
trap stop_node TERM INT

supervise containerd /var/log/containerd.log containerd --config /etc/containerd/config.toml &
supervisors=$!
i=0
until ctr version > /dev/null 2>&1; do
  i=$((i+1)); [ $i -gt 100 ] && { log "containerd did not start"; cat /var/log/containerd.log; exit 1; }
  sleep 0.1
done
# The node image's containerd store already holds the workload images
# (Dockerfile.node); a store that does not gets them here.
if [ -z "$(ctr -n k8s.io images ls -q)" ]; then
  for t in /var/lib/kubelab/images/*.tar; do
    ctr -n k8s.io images import --no-unpack=false "$t" > /dev/null
  done
fi
log "containerd ready, images: $(ctr -n k8s.io images ls -q | tr '\n' ' ')"

# kube-proxy logs to its file; the kubelet to the container's output (the
# backend shows its last lines when a node does not become Ready).
supervise kube-proxy /var/log/kube-proxy.log kubelab component kube-proxy $KUBE_PROXY_ARGS &
supervisors="$supervisors $!"
supervise kubelet - kubelab component kubelet $KUBELET_ARGS &
supervisors="$supervisors $!"
# The supervisors never return: this waits until the node is stopped.
wait
log "every supervisor exited"
exit 1
