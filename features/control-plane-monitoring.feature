@control-plane-monitoring
Feature: Monitoring the control plane through its own metrics
  Question: How would you monitor a Kubernetes control plane? Which
  metrics of the apiserver, etcd, the scheduler and the controller-manager
  would you alert on, and what does each one tell you?

  Model answer:
    Every control-plane component serves Prometheus metrics at /metrics,
    which Prometheus scrapes. Counters only grow, so alerts are written on
    their rate over a window; gauges are read as they are; latency comes
    from histograms, as percentiles (p99) over their buckets.

    The apiserver: the request rate and the error rate from
    apiserver_request_total, by verb, resource and code (5xx, and 429 when
    priority and fairness rejects), and the latency per verb from the
    apiserver_request_duration_seconds histogram. A request authentication
    or authorization refuses never reaches the handler that counts: the
    audit log has those.

    etcd, which every write goes through: etcd_server_has_leader, and
    etcd_server_leader_changes_seen_total, since frequent leader elections
    mean a slow disk or network; the disk latency, because a write is
    committed only after the write-ahead log is fsynced
    (etcd_disk_wal_fsync_duration_seconds, backend commit duration); the
    database size against its quota.

    The scheduler: scheduler_pending_pods by queue (pods piling up in the
    unschedulable queue), scheduler_schedule_attempts_total by result, and
    the scheduling latency. The controller-manager: its work queues per
    controller (workqueue_depth, workqueue_adds_total, the time items
    wait), which show a controller falling behind. And whether each
    component is up and holds its leader lease.

  Key points:
    - Every component serves Prometheus metrics at /metrics; counters are read as rates, latency as histogram percentiles.
      terms: /metrics, prometheus, 普罗米修斯 | rate, rates, 速率, 增量, counter, 计数器, histogram, 直方图, percentile, 分位, p99
    - The apiserver's request and error rate by code, and its latency per verb.
      terms: apiserver_request_total, request rate, requests per second, qps, 请求量, 请求数, 请求速率, 请求 | error, errors, 5xx, 错误, 失败 | latency, duration, slow, 延迟, 时延, 耗时
    - etcd's leader changes: frequent elections mean a slow disk or network.
      terms: leader change, leader changes, leader_changes, has_leader, election, elections, 切换, 选举, 选主 | etcd
    - etcd's disk latency: a write is committed only after the WAL fsync.
      terms: fsync, wal, disk, 磁盘, 落盘, 写盘
    - The scheduler's pending and unschedulable pods, and its attempts.
      terms: pending, unschedulable, pending_pods, 待调度, 无法调度, 调度失败, 积压 | scheduler, 调度器, 调度
    - The controller-manager's work queues show a controller falling behind.
      terms: workqueue, work queue, work queues, queue depth, 工作队列, 队列 | controller, controllers, controller-manager, 控制器

  Scenario: The metrics move as the cluster works
    metric(COMPONENT, NAME, {LABEL: VALUE}) reads what the component
    serves at /metrics, as a monitoring system would scrape it.

    Given a lab cluster with 3 etcd members
    When I record the expression "metric('kube-apiserver-1', 'apiserver_request_total', {'verb': 'POST', 'resource': 'configmaps', 'code': '201'})" as "posts"
    And I run kubectl "create configmap counted --from-literal=a=b"
    Then the expression "metric('kube-apiserver-1', 'apiserver_request_total', {'verb': 'POST', 'resource': 'configmaps', 'code': '201'}) > posts" holds within 10s
    And the expression "all(raft.members, metric(.name, 'etcd_disk_wal_fsync_duration_seconds_count') > 0)" holds
    When I apply:
      """
      apiVersion: v1
      kind: Pod
      metadata: {name: wants-gpu}
      spec:
        nodeSelector: {gpu: "true"}
        containers:
        - name: app
          image: kubelab/http:dev
      """
    Then the expression "metric(leader('kube-scheduler'), 'scheduler_pending_pods', {'queue': 'unschedulable'}) == 1" holds within 20s

  Scenario: A leader election is counted on the etcd members that saw it
    Given a lab cluster with 3 etcd members
    When I record the expression "filter(raft.members, !.isLeader)[0].name" as "follower"
    And I record the expression "metric(follower, 'etcd_server_leader_changes_seen_total')" as "changes"
    And I kill the etcd leader
    Then within 15s a new etcd leader is elected
    And the expression "metric(follower, 'etcd_server_leader_changes_seen_total') == changes + 1" holds within 10s
