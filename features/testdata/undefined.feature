Feature: a drill with a typo
  Question: What does the step library say about a step it does not know?

  Model answer:
    It fails the run and names the three closest phrases it knows.

  Scenario: A misspelt fault
    Given a lab cluster with 3 etcd members
    When I kil the etcd leader
    Then within 10s a new etcd leader is elected
