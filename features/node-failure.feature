@node-failure
Feature: A node dies
  Question: A worker node loses power. What does Kubernetes do, after how
  long, and what happens to the Pods that were running on it?

  Model answer:
    The kubelet proves it is alive by renewing its Lease in kube-node-lease
    (every ~10s) and by updating its NodeStatus. The node lifecycle
    controller in kube-controller-manager watches both. When a node has not
    been heard from for node-monitor-grace-period (40s to 50s by default),
    it sets the node's Ready condition to Unknown (NotReady) and taints it
    node.kubernetes.io/unreachable, with effect NoSchedule (nothing new is
    placed there) and NoExecute.
    Every Pod gets default tolerations for the not-ready and unreachable
    NoExecute taints, with tolerationSeconds 300 (the
    DefaultTolerationSeconds admission plugin). When they run out, the taint
    eviction controller deletes the Pods. Their ReplicaSet does not count
    terminating Pods, so it creates replacements, and the scheduler places
    them on healthy nodes. The old Pods stay Terminating in the API until
    the kubelet comes back to confirm, or someone force-deletes them
    (StatefulSet Pods are not replaced until then: one Pod per identity).
    With the defaults a dead node's Pods are replaced after about 40s + 300s,
    roughly 6 minutes: set a shorter tolerationSeconds on Pods that must
    fail over faster, and run several replicas spread across nodes. When
    the node returns, its Lease is renewed, Ready turns True and the taints
    are removed.

  Key points:
    - The kubelet proves it is alive by renewing its Lease in kube-node-lease and by its NodeStatus.
      terms: lease, heartbeat, 租约, 心跳 | kubelet
    - After node-monitor-grace-period without news the node goes NotReady (Unknown) and is tainted unreachable.
      terms: grace period, node-monitor-grace-period, 宽限期 | notready, not ready, unknown, unreachable, 不可达
      evidence: timeline node
    - Pods tolerate the unreachable NoExecute taint for tolerationSeconds (300), then they are evicted.
      terms: tolerationseconds, toleration seconds, 300, 容忍时间 | evict, 驱逐, deleted
    - The ReplicaSet creates replacements on healthy nodes; the old Pods stay Terminating until the kubelet returns.
      terms: replacement, replace, 替换 | terminating, 终止
      evidence: timeline pod
    - Shorter tolerationSeconds and several replicas spread across nodes make failover faster.
      terms: shorter, faster, 缩短, 更快 | replicas, spread, 副本, 分散

  Scenario: worker-2 stops heartbeating
    This cluster shortens the timings: node monitor grace period 8s
    (upstream 40s to 50s) and toleration seconds 10s (upstream 300s), so the
    node is NotReady after about 8s and its Pods are replaced about 10s
    later. A spread constraint puts one replica on each worker.

    Given a lab cluster with 3 workers
    And node monitor grace period 8s and toleration seconds 10s
    When I apply:
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, labels: {app: web}}
      spec:
        replicas: 3
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            topologySpreadConstraints:
            - maxSkew: 1
              topologyKey: kubernetes.io/hostname
              whenUnsatisfiable: DoNotSchedule
              nodeTaintsPolicy: Honor
              labelSelector: {matchLabels: {app: web}}
            containers: [{name: web, image: kubelab/http:dev}]
      """
    Then within 30s 3 pods labelled "app=web" are Running
    And the expression "len(filter(pods('app=web'), .node == 'worker-2')) == 1" holds
    When I take node "worker-2" down
    Then within 30s node "worker-2" is NotReady
    And within 15s node "worker-2" has the taint "node.kubernetes.io/unreachable:NoExecute"
    And the expression "all(filter(pods('app=web'), .node == 'worker-2'), !.deleting)" holds
    And within 40s no pod labelled "app=web" runs on node "worker-2"
    And the expression "any(events('TaintManagerEviction'), .object startsWith 'web-')" holds within 10s
    And within 30s 3 pods labelled "app=web" are Running
    When I bring node "worker-2" back up
    Then within 30s node "worker-2" is Ready
    And the expression "none(node('worker-2').taints, .key == 'node.kubernetes.io/unreachable')" holds within 30s
