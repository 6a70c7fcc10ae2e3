@ha-topology
Feature: Stacked or external etcd
  Question: kubeadm offers two HA topologies, stacked etcd and external
  etcd. What is the difference, and what does each tolerate?

  Model answer:
    In the stacked topology every control-plane node runs an etcd member
    next to its apiserver, controller-manager and scheduler, and the
    apiserver talks to its local member only. Three nodes give three
    members: fewer machines, simpler to set up. But a node that fails takes
    an apiserver and an etcd member at once. With 3 nodes one may fail: the
    other two keep the quorum (2 of 3) and serve. A second failure loses
    the quorum: the last apiserver still runs but cannot serve, because its
    member cannot commit or read consistently, so its /readyz fails and
    every write fails.
    In the external topology etcd runs on machines of its own (3 masters +
    3 etcd = 6): a master and an etcd member can fail at the same time, on
    different machines, and the cluster still works, and a master's
    failure never touches the quorum. It costs more machines and more
    operations work (its own certificates, backups, upgrades).
    Either way nothing acknowledged is lost: once the nodes return, the
    members elect a leader and every write acknowledged by a majority is
    there. Stacked suits small and test clusters; large production
    clusters often keep etcd apart.

  Key points:
    - Stacked puts an etcd member on every control-plane node, next to an apiserver that talks to it alone.
      terms: stacked, 堆叠, same node, same machine, 同一节点, 同一个节点, 同一台
    - A failed node in a stacked topology loses an apiserver and an etcd member at once.
      terms: both, at once, together, 同时, 一起, 连同 | etcd member, etcd 成员, member, 成员
      evidence: timeline fault
    - With 3 stacked nodes one may fail; a second failure loses the quorum and the last apiserver cannot serve.
      terms: quorum, majority, 法定人数, 多数 | cannot serve, not ready, readyz, 无法服务, 不能服务, 不可用, 写入失败, writes fail
    - External etcd runs on machines of its own and tolerates a master and an etcd member failing together, at the price of more machines.
      terms: external, 外部, separate, dedicated, 独立, 专用 | more machines, more nodes, 更多, 机器更多, 节点更多, cost, 成本

  Scenario: One stacked node fails, then a second
    A control-plane node is a target of its own: killing it kills its
    etcd member, apiserver, controller-manager and scheduler at once.

    Given a lab cluster:
      """
      stacked: true
      etcd: 3
      """
    Then the expression "len(apiservers()) == 3 && all(apiservers(), .ready) && raft.quorum" holds within 30s
    When I kill "control-plane-3"
    Then the expression "raft.quorum && raft.reachable == 2 && count(apiservers(), .ready) == 2" holds within 30s
    And kubectl "create configmap one-node-down --from-literal=answer=42" succeeds
    When I kill "control-plane-2"
    Then the expression "!raft.quorum && component('kube-apiserver-1').state == 'running'" holds within 15s
    And the expression "none(apiservers(), .ready)" holds within 30s
    And kubectl "create configmap two-nodes-down --from-literal=lost=yes --request-timeout=4s" fails
    When I start "control-plane-2"
    And I start "control-plane-3"
    Then the expression "raft.quorum && raft.reachable == 3 && all(apiservers(), .ready)" holds within 60s
    And kubectl "get configmap one-node-down -o jsonpath={.data.answer}" prints "42"
