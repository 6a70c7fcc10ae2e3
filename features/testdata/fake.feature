Feature: a drill on a fake cluster
  Question: What is left running when the scheduler is killed?

  Model answer:
    The pods that were bound keep running; only new pods wait.

  Scenario: The scheduler is killed, the pods stay
    Given a lab cluster with 2 schedulers
    When I kill "kube-scheduler-1"
    Then the expression "component(\"kube-scheduler-1\").state == \"stopped\"" holds
    And node "worker-1" is Ready
    And 2 pods labelled "app=web" are Running on node "worker-1"

  Scenario: A third pod never comes
    Given a lab cluster
    Then within 1s 3 pods labelled "app=web" are Running
