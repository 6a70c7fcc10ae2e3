@affinity
Feature: Affinity: required and preferred, IgnoredDuringExecution
  Question: What is the difference between nodeSelector, required and
  preferred node affinity, and pod anti-affinity? What does
  "IgnoredDuringExecution" mean?

  Model answer:
    nodeSelector and required node affinity (requiredDuringScheduling...)
    are filters: the scheduler's NodeAffinity Filter plugin removes nodes
    whose labels do not match, and a Pod that no node passes stays Pending
    (FailedScheduling says why). Preferred affinity only adds weight in the
    Score phase. Pod affinity and anti-affinity (InterPodAffinity) look at
    the Pods already running in a topology domain given by topologyKey:
    kubernetes.io/hostname means per node, topology.kubernetes.io/zone per
    zone; required anti-affinity by hostname puts at most one replica per
    node. IgnoredDuringExecution: the rules are only checked when a Pod is
    scheduled, so a Pod keeps running where it is when labels change later
    (the descheduler, not the scheduler, would move it).
    topologySpreadConstraints express "spread evenly" more directly.

  Key points:
    - nodeSelector and required node affinity are filters: a Pod no node passes stays Pending.
      terms: nodeselector, required, 硬性, 必须 | filter, pending, 过滤
    - Preferred affinity only adds weight when nodes are scored.
      terms: preferred, soft, 软性, 偏好 | score, weight, 打分, 权重
    - Pod affinity and anti-affinity look at the Pods in a topology domain given by topologyKey.
      terms: anti-affinity, anti affinity, antiaffinity, pod affinity, 反亲和 | topologykey, topology key, hostname, zone, 拓扑
    - IgnoredDuringExecution: the rules are checked only at scheduling, a running Pod is not moved when labels change.
      terms: ignoredduringexecution, ignored during execution, only when scheduled, only at scheduling, keeps running, not moved, not evicted, 不会驱逐, 不影响已运行

  Scenario: One replica per node, the rest Pending, and nothing moves on relabelling
    Given a lab cluster:
      """
      etcd: 1
      nodes:
      - {name: worker-1, labels: {zone: a}}
      - {name: worker-2, labels: {zone: a}}
      - {name: worker-3, labels: {zone: b}}
      """
    When I apply:
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: spread}
      spec:
        replicas: 3
        selector: {matchLabels: {app: spread}}
        template:
          metadata: {labels: {app: spread}}
          spec:
            affinity:
              nodeAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions: [{key: zone, operator: In, values: [a]}]
              podAntiAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                - labelSelector: {matchLabels: {app: spread}}
                  topologyKey: kubernetes.io/hostname
            containers: [{name: app, image: kubelab/http:dev}]
      """
    Then the expression "len(uniq(map(filter(pods('app=spread'), .phase == 'Running'), .node))) == 2 && len(filter(pods('app=spread'), .node == '')) == 1" holds within 20s
    And the expression "none(pods('app=spread'), .node == 'worker-3')" holds
    When I label node "worker-3" with "zone=a"
    Then within 30s 3 pods labelled "app=spread" are Running
    When I label node "worker-1" with "zone=b"
    Then the expression "any(pods('app=spread'), .node == 'worker-1') && all(pods('app=spread'), .phase == 'Running')" stays true for 3s
