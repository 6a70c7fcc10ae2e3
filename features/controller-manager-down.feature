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
