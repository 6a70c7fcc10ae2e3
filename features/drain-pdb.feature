@pdb-drain
Feature: Cordon and drain with a PodDisruptionBudget
  Question: You must take a node down for maintenance. How do you move its
  Pods off safely, and how does a PodDisruptionBudget protect the
  application while you do?

  Model answer:
    kubectl cordon marks the node unschedulable (spec.unschedulable): no new
    Pods land there, running ones stay. kubectl drain cordons, then evicts
    every Pod on the node (skipping DaemonSet and mirror Pods) through the
    Eviction API, not with plain deletes. The apiserver checks each eviction
    against the PodDisruptionBudgets that select the Pod: it is allowed only
    if the budget still has disruptions to spare (currentHealthy minus
    minAvailable, kept in the PDB's status by the disruption controller);
    otherwise it answers 429 Too Many Requests and drain waits and retries.
    Meanwhile the ReplicaSet replaces each evicted Pod on another node;
    once the replacement is Ready the budget allows the next eviction. So a
    Deployment of 3 with minAvailable 2 is drained one Pod at a time and
    never has fewer than 2 ready Pods. Drain finishes when the node is
    empty; uncordon it after the maintenance.
    Budgets are voluntary-disruption protection only (drains, autoscaler
    scale-downs), not against node crashes; a PDB that allows no
    disruptions (minAvailable equal to replicas) blocks a drain forever.

  Key points:
    - Cordon marks the node unschedulable; running Pods stay.
      terms: cordon, unschedulable, 不可调度, 封锁
    - Drain evicts the Pods through the Eviction API, not plain deletes.
      terms: evict, eviction, 驱逐
    - The apiserver allows an eviction only while the PodDisruptionBudget has disruptions to spare; otherwise 429 and drain retries.
      terms: poddisruptionbudget, pdb, disruption budget, 中断预算 | 429, too many requests, retry, retries, wait, spare, allowed, 重试, 等待
      evidence: timeline pod
    - The ReplicaSet replaces evicted Pods on other nodes, so the budget frees up one Pod at a time.
      terms: replace, replacement, another node, other node, 替换, 其他节点, 别的节点, 重新创建, 重建
    - Budgets protect against voluntary disruptions only, not node crashes.
      terms: voluntary, 自愿

  Scenario: Drain the node that runs every replica, under minAvailable 2
    The other workers are cordoned while the Deployment starts, so all 3
    replicas run on worker-1; the check of ready Pods runs in the background
    during the whole drain.

    Given a lab cluster with 3 workers
    When I cordon node "worker-2"
    And I cordon node "worker-3"
    And I apply:
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
            containers: [{name: web, image: kubelab/http:dev}]
      ---
      apiVersion: policy/v1
      kind: PodDisruptionBudget
      metadata: {name: web}
      spec:
        minAvailable: 2
        selector: {matchLabels: {app: web}}
      """
    Then within 30s 3 pods labelled "app=web" are Running on node "worker-1"
    When I uncordon node "worker-2"
    And I uncordon node "worker-3"
    And I keep checking for 90s that the expression "len(filter(pods('app=web'), .ready && !.deleting)) >= 2" holds
    And I drain node "worker-1"
    Then the drain was held back by a PodDisruptionBudget
    And the expression "node('worker-1').unschedulable" holds
    And within 30s no pod labelled "app=web" runs on node "worker-1"
    And within 30s 3 pods labelled "app=web" are Running
    And the expression held the whole time
