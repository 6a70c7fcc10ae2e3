@apiserver-down
Feature: What happens when the apiserver dies
  Question: The only kube-apiserver of a cluster crashes. What keeps
  working, what stops, and what happens when it comes back?

  Model answer:
    The apiserver is the only component that talks to etcd; kubectl,
    controllers, the scheduler and the kubelets only talk to it. While it is
    down:
    - Running Pods are not affected. Containers keep running; each kubelet
      keeps them going with what it already knows, and Services keep
      working through the rules kube-proxy already programmed.
    - Nothing can be created, changed or deleted: every kubectl write fails.
    - Controllers and the scheduler can neither watch nor write, so no Pod
      is created, scheduled or replaced. Their informers keep their last
      cache and retry.
    - Kubelets cannot report status or renew their node leases. After an
      outage longer than the node monitor grace period, nodes can be marked
      NotReady once the apiserver is back (the node lifecycle controller
      holds back evictions when most nodes go silent at once).
    - The scheduler and controller-manager cannot renew their leader Lease.
      After renewDeadline (10s) they give up leadership and exit, on
      purpose: two leaders must never act at once. Their supervisor (the
      kubelet, for static Pods) restarts them, and they take the Lease again
      once the apiserver answers.
    Recovery: in an HA control plane the load balancer sends clients to the
    other apiservers and nobody notices. With a single apiserver, restart it
    and check its connection to etcd. Once it is back, every client lists
    and watches again, and the controllers reconcile to the desired state,
    so work requested afterwards happens right away.

  Key points:
    - Running Pods keep running: kubelets and kube-proxy's rules carry on without the apiserver.
      terms: running pods, pods keep running, containers keep running, 继续运行, 正在运行, 正在跑, 已运行, 运行中, already running, existing pods, existing workloads, keep running | not affected, unaffected, keep running, keeps them going, 不受影响, 继续运行, 不会受到影响, 不会受影响, 照常
    - Nothing can be created, changed or deleted: every write fails.
      terms: write, create, changed, 写入, 创建 | fail, 失败, nothing can, 无法, 不能, 做不了, 报错
    - Controllers and the scheduler can neither watch nor write, so nothing is scheduled or replaced.
      terms: controller, scheduler, 控制器, 调度器 | watch, scheduled, replaced, 调度, 监听
    - The scheduler and controller-manager lose their leader Lease after renewDeadline and exit; they take it again once the apiserver is back.
      terms: lease, leader, 租约, 领导 | renewdeadline, renew deadline, give up, exit, restart, 退出, 重启
      evidence: timeline lease
    - Once the apiserver is back, clients list and watch again and controllers reconcile.
      terms: reconcile, catch up, list and watch, relist, 调谐, 重新

  Scenario: Kill the only apiserver, then start it again
    The expressions read the cluster through informers, which keep their
    cache while the apiserver is gone: that is the last known state. Nothing
    supervises the components here, so the drill restarts the scheduler and
    controller-manager itself, as a kubelet would.

    Given a lab cluster with 2 workers
    When I apply the file "manifests/web.yaml"
    Then within 30s 3 pods labelled "app=web" are Running
    When I kill every apiserver
    Then the expression "none(apiservers(), .ready)" holds within 10s
    And kubectl "create deployment more --image=kubelab/http:dev --request-timeout=5s" fails
    And kubectl "create configmap during-outage --from-literal=written=no --request-timeout=5s" fails
    And the expression "len(pods('app=web')) == 3 && all(pods('app=web'), .phase == 'Running')" stays true for 10s
    And the expression "component('kube-scheduler-1').state == 'exited' && component('kube-controller-manager-1').state == 'exited'" holds within 30s
    And the expression "component('kube-scheduler-1').exit == 'exit status 1'" holds
    When I start every apiserver
    Then the expression "all(apiservers(), .ready)" holds within 60s
    When I start every scheduler
    And I start every controller-manager
    And I scale deployment "web" to 5 replicas
    Then within 60s 5 pods labelled "app=web" are Running
    And kubectl "get configmap during-outage" fails with "NotFound|not found"
