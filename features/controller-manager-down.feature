@reconciliation
Feature: Controllers are level-triggered
  Question: Every kube-controller-manager is down for a while, and meanwhile
  someone scales a Deployment from 3 to 5 replicas. What happens during the
  outage, and when a controller-manager comes back?

  Model answer:
    The apiserver accepts the change: it only stores desired state
    (spec.replicas: 5). Nothing else happens, because the Deployment and
    ReplicaSet controllers that would turn that into two more Pods run in
    kube-controller-manager. Running Pods are unaffected (kubelets run
    them), and the scheduler idles because no new Pods appear.
    Controllers are level-triggered, not edge-triggered: they do not replay
    the events they missed. When a controller-manager starts (or takes over
    the lease) its informers list the current state, and each reconcile
    loop compares desired with observed state (5 wanted, 3 exist) and acts
    on the difference. So the missed change is caught up within seconds.
    Reconciling is idempotent, which is also why controllers survive
    dropped watch events, restarts and leader changes: the next pass always
    converges on the latest desired state.

  Key points:
    - The apiserver accepts the change: it only stores the desired state.
      terms: desired state, desired, stores, accept, 期望状态, 存储
    - Nothing happens while the controllers are down: they run in kube-controller-manager.
      terms: controller-manager, controller manager, kube-controller-manager, 控制器管理器 | nothing happens, no new pods, not created, 不会创建, 没有, 没人, 没有人, 不会有新
    - Controllers are level-triggered: they do not replay missed events, they compare desired with observed state.
      terms: level-triggered, level triggered, level based, 水平触发 | compare, desired, observed, actual, difference, 比较, 差异
    - When the controller-manager comes back, it lists the current state and catches up within seconds.
      terms: catch up, caught up, reconcile, list, 追上, 调谐
      evidence: timeline pod

  Scenario: Scale a Deployment while every controller-manager is stopped
    Leader election is shortened to lease duration 4s, renew deadline 3s
    and retry period 1s, so the restarted controller-manager leads quickly.

    Given a lab cluster:
      """
      workers: 2
      timings: {leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 1s}
      """
    When I apply the file "manifests/web.yaml"
    Then within 30s 3 pods labelled "app=web" are Running
    When I record the expression "sort(map(pods('app=web'), .name))" as "podsBefore"
    And I stop every controller-manager
    And I scale deployment "web" to 5 replicas
    Then the expression "deployment('web').replicas == 5" holds within 10s
    And the expression "sort(map(pods('app=web'), .name)) != podsBefore" stays false for 8s
    And the expression "len(replicasets('app=web')) == 1 && replicasets('app=web')[0].replicas == 3" holds
    When I start every controller-manager
    Then within 60s 5 pods labelled "app=web" are Running
    And the expression "replicasets('app=web')[0].replicas == 5" holds within 10s
