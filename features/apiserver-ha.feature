@apiserver-down
Feature: HA apiservers behind a load balancer
  Question: Your control plane runs several kube-apiservers behind a load
  balancer. One of them dies. What do clients notice, and why should that
  load balancer work at layer 4?

  Model answer:
    The apiserver is stateless: all state is in etcd, and every apiserver
    serves the same API from the same etcd cluster (each with its own watch
    cache). So it scales and survives horizontally: run at least 3 behind a
    load balancer (HAProxy with keepalived, a cloud NLB), point every
    apiserver at all etcd members, and point kubelets, controllers,
    schedulers and kubectl at the load balancer's address.
    When one apiserver dies, connections to it are refused and the load
    balancer's health check (/readyz) takes it out of rotation; new requests
    go to the others. Clients notice at most a failed in-flight request or a
    broken watch, which client-go retries and re-establishes; scheduling and
    reconciling go on. When it comes back, /readyz turns 200 once it has
    synced with etcd and it rejoins the rotation.
    The balancer should be L4 (TCP): TLS stays end to end (client
    certificates authenticate users and components), and long-lived HTTP/2
    watch streams pass through untouched. /livez says "restart me if
    failing", /readyz says "send me traffic", /healthz is the older form.

  Key points:
    - The apiserver is stateless: all state is in etcd, so several can run side by side.
      terms: stateless, all state is in etcd, 无状态, 不保存状态, 没有状态, 不存状态, keep any state, keeps no state, holds no state, no state | etcd
    - Run several behind a load balancer that every client points at.
      terms: load balancer, haproxy, nlb, 负载均衡
    - When one dies the balancer's health check takes it out of rotation; clients retry and re-establish watches.
      terms: health check, readyz, out of rotation, 健康检查 | retry, re-establish, reconnect, other apiserver, 重试, 重连
      evidence: timeline fault
    - The balancer is L4 (TCP): TLS stays end to end and watch streams pass through.
      terms: l4, tcp, layer 4, 四层 | tls, end to end, client certificate, 证书

  Scenario: Kill one of two apiservers
    Given a lab cluster with 2 apiservers and 2 workers
    Then the expression "len(apiservers()) == 2 && all(apiservers(), .ready)" holds within 30s
    When I kill "kube-apiserver-1"
    Then the expression "len(filter(apiservers(), .ready)) == 1" holds within 10s
    And kubectl "get nodes --request-timeout=5s" succeeds 10 times in a row
    And kubectl "create deployment web --image=kubelab/http:dev --replicas=2" succeeds
    And within 30s 2 pods labelled "app=web" are Running
    When I start "kube-apiserver-1"
    Then the expression "all(apiservers(), .ready)" holds within 60s
    And kubectl "get deployment web --request-timeout=5s" succeeds 10 times in a row
