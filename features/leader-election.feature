@leader-election
Feature: Scheduler and controller-manager leader election
  Question: You run two kube-schedulers and two kube-controller-managers for
  high availability. How do they avoid acting twice, and what happens when
  the active one dies?

  Model answer:
    Only one instance of each is active: the leader, chosen through a Lease
    object in kube-system (kube-scheduler, kube-controller-manager). Every
    instance tries to acquire the Lease. The holder renews it every
    retryPeriod (default 2s) and gives up leadership if it cannot renew
    within renewDeadline (10s); the standbys retry every retryPeriod and may
    take the Lease only once it has gone unrenewed for leaseDuration (15s).
    Only the leader runs its scheduling or control loops; standbys just
    wait, with warm caches.
    When the leader is killed it cannot release the Lease, so a standby
    takes over after about leaseDuration (plus up to one retryPeriod):
    roughly 15s with the defaults. A graceful shutdown can release the Lease
    for an immediate handover. Nothing is lost in between: the new leader
    lists the current state and reconciles (level-triggered), so Pods
    created meanwhile are scheduled as soon as it leads. Shorter timings
    mean faster failover but more API traffic and more risk of flapping
    leaders under load. etcd does not use Leases: it elects its leader with
    Raft.

  Key points:
    - One instance leads, chosen through a Lease in kube-system; the others stand by.
      terms: lease, 租约 | leader, standby, 领导者, 备用
    - The holder renews every retryPeriod and gives up after renewDeadline; a standby takes the Lease once it is leaseDuration old.
      terms: leaseduration, lease duration, renewdeadline, renew deadline, retryperiod, retry period, 租约时长
    - A killed leader cannot release the Lease, so failover takes about leaseDuration (15s by default).
      terms: 15s, 15 s, 15 seconds, about leaseduration, lease duration, 15 秒, 15秒 | failover, take over, takes over, 接管, 故障转移
      evidence: recovery
    - Nothing is lost: the new leader lists the current state and reconciles.
      terms: reconcile, level-triggered, level triggered, lists the current, 调谐, 水平触发
    - etcd does not use Leases: it elects its leader with Raft.
      terms: raft

  Scenario: Kill the scheduler leader, then the controller-manager leader
    The cluster shortens leader election to lease duration 4s, renew
    deadline 3s and retry period 1s (upstream 15s, 10s and 2s), so each
    failover takes about 5s; the recovery figures show the real times.

    Given a lab cluster with 2 schedulers, 2 controller-managers and 2 workers
    And lease duration 4s, renew deadline 3s and retry period 1s
    Then the expression "leader('kube-scheduler') startsWith 'kube-scheduler-' && leader('kube-controller-manager') startsWith 'kube-controller-manager-'" holds within 30s
    When I kill the scheduler leader
    Then within 12s a new scheduler leader is elected
    When I kill the controller-manager leader
    Then within 12s a new controller-manager leader is elected
    When I apply the file "manifests/web.yaml"
    Then within 30s 3 pods labelled "app=web" are Running
    And the expression "any(events('Scheduled'), .object startsWith 'web-')" holds
