@resources
Feature: Requests, limits and QoS classes
  Question: What are a container's requests and limits for? What happens
  to a Pod that sets neither, and what does its QoS class change?

  Model answer:
    Requests are a reservation. The scheduler places a Pod only on a node
    whose allocatable resources, minus the requests of the Pods already
    bound there, cover the Pod's requests (the NodeResourcesFit filter). It
    counts requests, never what the containers really use: a node can be
    idle and still "full", and a Pod that requests nothing reserves
    nothing, so the scheduler piles such Pods onto a node and the node is
    overcommitted.

    Limits are enforced on the node: the kubelet writes them into the
    container's cgroup through the container runtime. CPU above the limit
    is throttled; memory above it is killed by the kernel's OOM killer
    (the container ends OOMKilled, exit code 137, and is restarted with a
    growing back-off).

    The apiserver gives every Pod a QoS class from them: Guaranteed when
    every container has requests equal to limits for CPU and memory,
    BestEffort when none sets any, Burstable otherwise. Under memory
    pressure the kubelet evicts BestEffort Pods first and Guaranteed ones
    last.

    A namespace can enforce them: a LimitRange fills in default requests
    and limits for containers that set none, and refuses values above its
    maximum; a ResourceQuota caps the sum of the namespace's requests and
    limits, refuses a Pod that would exceed it, and refuses a Pod that
    sets no value it caps. So: always set requests (what the container
    needs) and a memory limit.

  Key points:
    - Requests are what the scheduler reserves: it sums the requests on a node against its allocatable, not the real usage.
      terms: request, requests, 请求 | schedul, 调度 | allocatable, reserve, reservation, sum, 预留, 可分配, 总和, 之和, 累加, not usage, not the real, 实际使用, 真实使用, 不看实际
    - A Pod without requests reserves nothing, so Pods pile onto a node and it is overcommitted.
      terms: without requests, no requests, sets no, reserves nothing, 没有 requests, 不设置, 没有设置, 未设置, 不设 | overcommit, pile, crowd, 超卖, 过载, 超售, 挤, 堆
    - Limits are enforced by the node's cgroups: CPU above the limit is throttled, memory above it OOMKilled.
      terms: limit, limits, 限制 | cgroup, kernel, 内核 | throttl, throttled, throttling, 节流, 限流 | oom, oomkilled, oom killer, out of memory, 内存溢出, 杀掉
      evidence: timeline pod
    - The QoS class (Guaranteed, Burstable, BestEffort) comes from requests and limits; BestEffort is evicted first.
      terms: qos, 服务质量 | guaranteed | besteffort, best effort | evict, 驱逐
    - A LimitRange sets defaults and maximums; a ResourceQuota caps a namespace's sum and refuses Pods without requests.
      terms: limitrange, limit range | resourcequota, resource quota, quota, 配额

  Scenario: One CPU, requested twice over
    The only worker has 1 CPU. The scheduler reserves what Pods request;
    kwok's simulated node runs nothing, so only the reservation is real.

    Given a lab cluster:
      """
      nodes:
      - {name: worker-1, capacity: {cpu: "1", memory: 2Gi}}
      """
    When I apply:
      """
      apiVersion: v1
      kind: Pod
      metadata: {name: guaranteed}
      spec:
        containers:
        - name: app
          image: kubelab/http:dev
          resources:
            requests: {cpu: 600m, memory: 64Mi}
            limits: {cpu: 600m, memory: 64Mi}
      ---
      apiVersion: v1
      kind: Pod
      metadata: {name: besteffort}
      spec: {containers: [{name: app, image: kubelab/http:dev}]}
      """
    Then the expression "pod('guaranteed').qos == 'Guaranteed' && pod('besteffort').qos == 'BestEffort'" holds
    And the expression "pod('guaranteed').phase == 'Running' && pod('besteffort').phase == 'Running'" holds within 30s
    When I apply:
      """
      apiVersion: v1
      kind: Pod
      metadata: {name: burstable}
      spec:
        containers:
        - name: app
          image: kubelab/http:dev
          resources: {requests: {cpu: 600m}}
      """
    Then the expression "pod('burstable').qos == 'Burstable'" holds
    And the expression "any(events('FailedScheduling'), .object == 'burstable' && .message contains 'Insufficient cpu')" holds within 30s
    And the expression "pod('burstable').node == ''" stays true for 2s
    When I delete Pod "guaranteed"
    Then the expression "pod('burstable').phase == 'Running' && pod('burstable').node == 'worker-1'" holds within 30s

  Scenario: A namespace's LimitRange and ResourceQuota
    Given a lab cluster
    When I apply:
      """
      apiVersion: v1
      kind: Namespace
      metadata: {name: team}
      ---
      apiVersion: v1
      kind: LimitRange
      metadata: {name: per-container, namespace: team}
      spec:
        limits:
        - type: Container
          defaultRequest: {cpu: 100m, memory: 64Mi}
          default: {cpu: 200m, memory: 128Mi}
          max: {cpu: 500m}
      ---
      apiVersion: v1
      kind: ResourceQuota
      metadata: {name: quota, namespace: team}
      spec: {hard: {requests.cpu: 250m}}
      """
    Then the expression "get('resourcequotas', 'quota', 'team').status.hard['requests.cpu'] == '250m'" holds within 30s
    When I run kubectl "-n team run plain --image=kubelab/http:dev"
    Then it succeeds
    And the expression "get('pods', 'plain', 'team').spec.containers[0].resources.requests.cpu == '100m' && get('pods', 'plain', 'team').status.qosClass == 'Burstable'" holds
    When I run kubectl "-n team create -f -" with the manifest:
      """
      apiVersion: v1
      kind: Pod
      metadata: {name: greedy}
      spec:
        containers:
        - {name: app, image: kubelab/http:dev, resources: {limits: {cpu: "1"}}}
      """
    Then it fails
    And the output matches "maximum cpu usage per Container is 500m"
    When I run kubectl "-n team run second --image=kubelab/http:dev"
    Then it succeeds
    When I run kubectl "-n team run third --image=kubelab/http:dev"
    Then it fails
    And the output matches "exceeded quota: quota, requested: requests.cpu=100m, used: requests.cpu=200m, limited: requests.cpu=250m"
