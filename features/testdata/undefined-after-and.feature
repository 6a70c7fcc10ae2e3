Feature: a drill with a typo after a Background and an And
  Question: Which keywords does a scenario's report give its steps?

  Model answer:
    The feature file's: the Background's steps first, And as written.

  Background:
    Given a lab cluster with 3 etcd members

  Scenario: A misspelt fault after an And
    Given etcd compaction interval 5s
    And I kil the etcd leader
    Then within 10s a new etcd leader is elected
