@etcd-raft
Feature: etcd quorum lost and regained
  Question: Two of the three etcd members die at once. What happens to the
  cluster, and is anything lost when they come back?

  Model answer:
    A Raft cluster of N members needs a majority (quorum, N/2 + 1) to elect
    a leader and to commit anything: 2 of 3, 3 of 5. With 2 of 3 members
    gone, the survivor cannot commit: a leader that cannot reach a majority
    steps down (check-quorum), and a follower cannot win an election. So
    there is no leader, and every write through the apiserver fails or
    times out; consistent reads fail too. Running Pods keep running, but
    the control plane is frozen: nothing can be created, changed or
    scheduled.
    Nothing acknowledged is lost: a write was only acknowledged once a
    majority had it on disk, so every acknowledged write is on at least one
    member of any future majority. When the members come back they elect a
    leader (in a higher term) and everything written before the outage is
    there. A write refused while there is no leader is never applied. But a
    write that merely timed out is unknown, not failed: the old leader may
    have appended it to its log just before losing quorum, and if that
    member wins the next election the entry is committed after all. Clients
    must treat a timeout as "maybe" and retry idempotently.
    If the members are gone for good, you restore from a snapshot (etcdctl
    snapshot save / restore) into a new cluster. This is why you run 3 or 5
    members (tolerating 1 or 2 failures), on fast disks, and back them up.

  Key points:
    - Raft needs a majority (quorum, N/2 + 1) to elect a leader and commit anything.
      terms: majority, quorum, n/2 + 1, 多数, 法定人数
    - With 2 of 3 members gone there is no leader, and every write fails or times out.
      terms: no leader, without a leader, cannot elect, 没有领导者, 无主, 选不出, 无法选出, 没有 leader, 没有主 | write, 写
      evidence: timeline etcd-leader
    - Running Pods keep running, but the control plane is frozen.
      terms: running pods, pods keep running, 继续运行, 正在运行, 已运行, 运行中, 不受影响, already running, keep running | frozen, nothing can be created, 冻结, 任何变更, 无法变更, 不能变更, 无法修改, 不能修改, 只读, 瘫痪
    - Nothing acknowledged is lost; when the members return they elect a leader and the data is there.
      terms: nothing acknowledged is lost, not lost, nothing is lost, 不会丢失, 不会丢, nothing that was acknowledged, no acknowledged, never lost | elect, 选举, 选出, 选主
      evidence: recovery
    - A write that timed out is unknown, not failed: retry idempotently.
      terms: timeout, timed out, 超时 | unknown, maybe, idempotent, 未知, 幂等

  Scenario: Kill two of three members, then start them again
    The write during the outage waits until the survivor has stepped down
    (no leader), so it is refused for sure rather than left in doubt.

    Given a lab cluster with 3 etcd members
    And within 30s the etcd cluster has quorum
    When I apply:
      """
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: before-outage}
      data: {answer: "42"}
      """
    And I kill an etcd follower
    And I kill an etcd follower
    Then within 15s the etcd cluster has lost quorum
    And the expression "!raft.hasLeader" holds within 15s
    And kubectl "create configmap during-outage --from-literal=lost=yes --request-timeout=4s" fails
    And the expression "raft.hasLeader" stays false for 3s
    When I start every etcd member
    Then within 30s the etcd cluster has quorum
    And within 30s 3 etcd members are reachable
    And within 30s kubectl "get configmap before-outage -o jsonpath={.data.answer}" prints "^42$"
    And kubectl "get configmap during-outage" fails with "NotFound|not found"
    And kubectl "create configmap after-outage --from-literal=written=yes" succeeds
