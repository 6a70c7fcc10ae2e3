@etcd-raft
Feature: etcd leader failover
  Question: etcd runs as a 3-member Raft cluster. What happens when the
  leader dies, how long until writes work again, and what happens when the
  old leader comes back?

  Model answer:
    Raft has three roles. The leader takes every write, appends it to its
    log and replicates it to the followers; an entry is committed once a
    majority (2 of 3) has it, and only then is the write acknowledged. The
    leader sends heartbeats; followers that hear nothing for an election
    timeout (about 1s in etcd) become candidates, start an election in a
    new, higher term and win with the votes of a majority.

    So when the leader is killed: for about one election timeout nothing
    can be committed, then one follower becomes leader in term + 1. The
    apiservers' etcd clients (which know every member) retry on the new
    leader, and writes succeed again within a couple of seconds. Nothing
    acknowledged is lost, because every acknowledged write was already on
    a majority, and a candidate whose log lacks committed entries cannot
    win a vote.

    3 members tolerate 1 failure, 5 tolerate 2; an even count adds
    replication cost without adding tolerance. When the old leader
    restarts it sees the higher term, rejoins as a follower and catches up
    from the leader's log (or a snapshot). A leader that is alive but
    stalled (a slow disk whose fsync does not return) is replaced the same
    way; when it wakes it steps down, and clients whose requests went to
    it waited until their timeout: why etcd wants fast disks.

  Key points:
    - A write is committed once a majority of the members has it, and only then acknowledged.
      terms: majority, quorum, 2 of 3, 多数, 法定人数 | commit, acknowledg, 提交, 确认
    - Followers that hear no heartbeat for an election timeout start an election in a higher term.
      terms: election timeout, heartbeat, times out, time out, timeout, 选举超时, 超时, 心跳 | term, 任期
      evidence: timeline etcd-term
    - A follower becomes leader within about one election timeout, and writes work again within seconds.
      terms: new leader, becomes leader, elected, wins an election, wins the election, 新的领导者, 新 leader, 选出 | second, 秒
      evidence: recovery
    - Nothing acknowledged is lost: every acknowledged write is already on a majority.
      terms: nothing acknowledged is lost, not lost, no data loss, nothing is lost, 不会丢失, 不丢, 不会丢, no acknowledged, never lost, no data is lost
    - 3 members tolerate 1 failure, 5 tolerate 2; an even count adds nothing.
      terms: tolerate, tolerance, 容忍, 容错 | even, odd, 偶数, 奇数
    - The old leader rejoins as a follower when it sees the higher term, and catches up.
      terms: rejoin, follower, 跟随者, 重新加入 | catch, 追上, 同步
      evidence: raft.leader != etcdBefore.leader

  Scenario: Kill the leader of a 3-member etcd cluster
    The timeline shows the kill, the moment the cluster had no leader, and
    the new leader in a higher term.

    Given a lab cluster with 3 etcd members
    And within 30s the etcd cluster has quorum
    When I kill the etcd leader
    Then within 10s a new etcd leader is elected
    And kubectl "create configmap after-failover --from-literal=written=yes" succeeds
    And kubectl "get configmap after-failover -o jsonpath={.data.written}" prints "^yes$"
    When I start every etcd member
    Then within 30s 3 etcd members are reachable
    And the expression "raft.leader != etcdBefore.leader && all(raft.members, .term == raft.term)" holds within 20s

  Scenario: Pause the leader - a stalled leader is replaced, and steps down when it wakes
    A paused process is alive but silent, as a leader whose disk does not
    return from fsync: to Raft it is as gone as a dead one.

    Given a lab cluster with 3 etcd members
    And within 30s the etcd cluster has quorum
    When I pause the etcd leader
    Then within 10s a new etcd leader is elected
    When I resume every etcd member
    Then within 30s 3 etcd members are reachable
    And the expression "raft.leader != etcdBefore.leader && all(raft.members, .term == raft.term)" holds within 20s
