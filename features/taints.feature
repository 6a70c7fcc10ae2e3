@taints
Feature: Taints: NoSchedule, PreferNoSchedule and NoExecute
  Question: What is the difference between the taint effects NoSchedule,
  PreferNoSchedule and NoExecute? What happens to Pods already running on
  the node?

  Model answer:
    A taint (key=value:effect) on a node repels Pods; a toleration on a Pod
    lets it ignore a matching taint. Tolerating a taint only allows a node,
    it does not attract the Pod to it (use node affinity for that).
    - NoSchedule: the scheduler's filter removes the node for every Pod that
      does not tolerate the taint. Pods already running there stay.
    - PreferNoSchedule: a soft version. The scheduler's TaintToleration
      score ranks the node last, so Pods go elsewhere when they can, but it
      is still used when no other node fits.
    - NoExecute: no new intolerant Pods, and the taint eviction controller
      (in kube-controller-manager) evicts the intolerant Pods already
      running there, at once or after the tolerationSeconds of their
      toleration. This is how the node lifecycle controller empties dead
      nodes (node.kubernetes.io/unreachable and not-ready).
    Control-plane nodes usually carry node-role.kubernetes.io/control-plane
    with NoSchedule to keep workloads off them; add a toleration for
    agents that must run there.

  Key points:
    - A taint on a node repels Pods; a toleration only allows a Pod there, it does not attract it.
      terms: taint, 污点 | toleration, tolerate, 容忍 | not attract, does not attract, only allow, 不会吸引, 不吸引, 不会把 Pod 吸引, node affinity, 不一定, 不是一定, 并不保证, 只是允许, 只是让
    - NoSchedule: the scheduler filters the node out for intolerant Pods; running Pods stay.
      terms: noschedule, no schedule | stay, keep running, already running, 保留, 继续, running pods
    - PreferNoSchedule is soft: the node is scored last but still used when nothing else fits.
      terms: prefernoschedule, prefer no schedule | soft, last, 软, 最后
    - NoExecute also evicts the intolerant Pods already running, at once or after tolerationSeconds.
      terms: noexecute, no execute | evict, 驱逐 | tolerationseconds, toleration seconds, 容忍时间, at once, immediately, 立即
      evidence: timeline pod

  Scenario: Three workers, three taint effects
    worker-1 gets NoSchedule, worker-2 PreferNoSchedule; then worker-3, the
    only untainted node, gets NoExecute.

    Given a lab cluster with 3 workers
    When I apply:
      """
      apiVersion: v1
      kind: Pod
      metadata: {name: pinned}
      spec:
        nodeSelector: {kubernetes.io/hostname: worker-1}
        containers: [{name: app, image: kubelab/http:dev}]
      """
    Then the expression "pod('pinned').phase == 'Running' && pod('pinned').node == 'worker-1'" holds within 30s
    When I taint node "worker-1" with "dedicated=infra:NoSchedule"
    And I taint node "worker-2" with "spot=true:PreferNoSchedule"
    Then the expression "pod('pinned').phase == 'Running' && !pod('pinned').deleting" stays true for 3s
    When I apply the file "manifests/web.yaml"
    Then within 30s 3 pods labelled "app=web" are Running on node "worker-3"
    When I taint node "worker-3" with "maintenance=true:NoExecute"
    Then within 30s no pod labelled "app=web" runs on node "worker-3"
    And the expression "any(events('TaintManagerEviction'), .object startsWith 'web-')" holds within 10s
    And within 30s 3 pods labelled "app=web" are Running on node "worker-2"
    And the expression "pod('pinned').phase == 'Running' && pod('pinned').node == 'worker-1'" holds
