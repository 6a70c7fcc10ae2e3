@priority
Feature: PriorityClass and preemption
  Question: A cluster is full and an important Pod cannot be scheduled.
  What does its PriorityClass change, and what happens to the Pods already
  running?

  Model answer:
    A PriorityClass gives Pods a priority value (and a preemptionPolicy).
    Priority orders the scheduling queue: higher first. When a Pod fits on
    no node, the scheduler's PostFilter plugin DefaultPreemption searches
    for a node where evicting Pods of lower priority would make room,
    choosing the fewest and lowest-priority victims (respecting
    PodDisruptionBudgets when it can), deletes them gracefully (event
    Preempted, condition DisruptionTarget), sets the Pod's
    nominatedNodeName and schedules it when room is free. Equal or higher
    priority Pods are never victims; preemptionPolicy: Never waits instead.
    system-cluster-critical and system-node-critical are the built-in
    classes for the control plane's own Pods.

  Key points:
    - A PriorityClass gives Pods a priority that orders the scheduling queue.
      terms: priorityclass, priority class, 优先级类 | queue, order, higher first, 队列, 优先
    - When a Pod fits nowhere, preemption (DefaultPreemption in PostFilter) evicts lower-priority Pods to make room.
      terms: preempt, 抢占 | lower priority, lower-priority, 低优先级
      evidence: timeline pod
    - The victims are the fewest and lowest-priority Pods, respecting PodDisruptionBudgets when it can.
      terms: fewest, victim, 最少, 牺牲 | disruption budget, poddisruptionbudget, pdb
    - The preemptor gets nominatedNodeName and is scheduled when the room is free.
      terms: nominatednodename, nominated node, 提名
    - Equal or higher priority Pods are never victims; preemptionPolicy Never waits instead.
      terms: never, equal, 不会 | preemptionpolicy, preemption policy, 抢占策略

  Scenario: A high-priority Pod preempts a low-priority one on a full node
    Given a lab cluster:
      """
      etcd: 1
      nodes:
      - {name: worker-1, capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
      """
    When I apply:
      """
      apiVersion: scheduling.k8s.io/v1
      kind: PriorityClass
      metadata: {name: low}
      value: 100
      ---
      apiVersion: scheduling.k8s.io/v1
      kind: PriorityClass
      metadata: {name: high}
      value: 10000
      ---
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: batch}
      spec:
        replicas: 2
        selector: {matchLabels: {app: batch}}
        template:
          metadata: {labels: {app: batch}}
          spec:
            priorityClassName: low
            containers: [{name: app, image: kubelab/http:dev, resources: {requests: {cpu: 900m}}}]
      """
    Then within 30s 2 pods labelled "app=batch" are Running
    When I apply:
      """
      apiVersion: v1
      kind: Pod
      metadata: {name: urgent, labels: {app: urgent}}
      spec:
        priorityClassName: high
        containers: [{name: app, image: kubelab/http:dev, resources: {requests: {cpu: 900m}}}]
      """
    Then within 60s 1 pods labelled "app=urgent" are Running on node "worker-1"
    And the expression "any(events('Preempted'), .kind == 'Pod' && .object contains 'batch-')" holds within 20s
    And the expression "len(filter(pods('app=batch'), .phase == 'Running')) == 1 && len(filter(pods('app=batch'), .node == '')) == 1" holds within 30s
