@scheduler-framework
Feature: The scheduling framework: Filter, Score, weights and profiles
  Question: How does kube-scheduler choose a node for a Pod? What are
  Filter and Score plugins, and how would you make it prefer packing Pods
  onto fewer nodes?

  Model answer:
    One Pod per scheduling cycle, through the plugins of the Pod's profile
    (spec.schedulerName). PreFilter computes state once; Filter runs per
    node and the first plugin to say no rules the node out with a reason
    (TaintToleration: an untolerated taint; NodeResourcesFit: requests do
    not fit in allocatable; NodeAffinity; NodePorts...). If no node is
    left, PostFilter (DefaultPreemption) looks for lower-priority victims
    and the Pod stays Pending with a FailedScheduling event listing every
    reason. If one node is left it is chosen unscored. Otherwise Score
    plugins score each feasible node, NormalizeScore maps each plugin to
    0-100, each is multiplied by its weight (TaintToleration 3,
    NodeAffinity 2, PodTopologySpread 2, InterPodAffinity 2,
    NodeResourcesFit 1, BalancedAllocation 1, ImageLocality 1) and the
    highest sum wins, ties at random. Reserve, Permit and PreBind follow,
    then Bind writes pods/binding. percentageOfNodesToScore stops Filter
    once enough feasible nodes are found on big clusters. A
    KubeSchedulerConfiguration changes weights, enables or disables
    plugins and passes arguments: NodeResourcesFit's scoringStrategy
    MostAllocated packs Pods onto the fullest node that fits. Its
    extenders add HTTP services the scheduler calls after its own Filter
    plugins (with the nodes they left) and Score plugins (0-10, times
    the extender's weight and 10).

  Key points:
    - Filter plugins rule nodes out, each with a reason (TaintToleration, NodeResourcesFit...).
      terms: filter, 过滤 | taint, resource, reason, 污点, 资源, 原因
    - If no node is left the Pod stays Pending with FailedScheduling, after PostFilter tried preemption.
      terms: pending, failedscheduling, 挂起 | postfilter, preempt, 抢占
    - Score plugins score each feasible node 0-100, multiplied by their weights; the highest sum wins.
      terms: score, 打分, 评分 | weight, 权重 | highest, sum, total, 最高, 总分
      evidence: timeline pod
    - Bind writes the chosen node (pods/binding) after Reserve, Permit and PreBind.
      terms: bind, 绑定
    - A KubeSchedulerConfiguration profile changes weights and plugins (MostAllocated packs Pods).
      terms: kubeschedulerconfiguration, profile, 配置 | mostallocated, most allocated, pack, 打包, 装箱

  Scenario: Each rejected node has its plugin and reason; the bound node has the highest total
    Given a lab cluster:
      """
      nodes:
      - name: worker-1
        taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
      - {name: worker-2, capacity: {memory: 1Gi}}
      - {name: worker-3, capacity: {memory: 4Gi}}
      - {name: worker-4, capacity: {memory: 8Gi}}
      """
    When I apply:
      """
      apiVersion: v1
      kind: Pod
      metadata: {name: big}
      spec:
        containers:
        - name: app
          image: kubelab/http:dev
          resources: {requests: {cpu: 100m, memory: 2Gi}}
      """
    Then within 30s the scheduler bound pod "big" to node "worker-4", its highest total score
    And the scheduler filtered node "worker-1" out of pod "big" with TaintToleration
    And the scheduler filtered node "worker-2" out of pod "big" with NodeResourcesFit
    And the expression "scheduling('big').scores['worker-4']['NodeResourcesFit'] > scheduling('big').scores['worker-3']['NodeResourcesFit']" holds
    And the expression "pod('big').phase == 'Running' && pod('big').node == 'worker-4'" holds within 30s

  Scenario: A profile with another weight for NodeResourcesFit sends the same Pod elsewhere
    Given a lab cluster:
      """
      nodes:
      - {name: worker-3, capacity: {memory: 4Gi}}
      - {name: worker-4, capacity: {memory: 8Gi}}
      scheduler:
        config:
          profiles:
          - schedulerName: default-scheduler
          - schedulerName: free-space-first
            plugins:
              score:
                enabled: [{name: NodeResourcesFit, weight: 50}]
      """
    When I apply:
      """
      apiVersion: v1
      kind: Pod
      metadata: {name: default}
      spec:
        affinity:
          nodeAffinity:
            preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              preference: {matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [worker-3]}]}
        containers: [{name: app, image: kubelab/http:dev, resources: {requests: {memory: 1Gi}}}]
      ---
      apiVersion: v1
      kind: Pod
      metadata: {name: weighted}
      spec:
        schedulerName: free-space-first
        affinity:
          nodeAffinity:
            preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              preference: {matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [worker-3]}]}
        containers: [{name: app, image: kubelab/http:dev, resources: {requests: {memory: 1Gi}}}]
      """
    Then within 30s the scheduler bound pod "default" to node "worker-3", its highest total score
    And within 30s the scheduler bound pod "weighted" to node "worker-4", its highest total score
    And the expression "scheduling('weighted').weights['NodeResourcesFit'] == 50 && scheduling('default').weights['NodeResourcesFit'] == 1" holds

  Scenario: A scheduler extender filters and scores over HTTP, after the plugins
    Given a lab cluster:
      """
      nodes:
      - {name: worker-1, labels: {disk: hdd, zone: b}}
      - {name: worker-2, labels: {disk: ssd, zone: a}}
      - {name: worker-3, labels: {disk: ssd, zone: b}}
      scheduler:
        extender:
          filter: 'node.labels["disk"] != "hdd"'
          prioritize: 'node.labels["zone"] == pod.labels["zone"] ? 10 : 0'
          weight: 5
      """
    When I apply:
      """
      apiVersion: v1
      kind: Pod
      metadata: {name: web, labels: {zone: b}}
      spec:
        containers: [{name: app, image: kubelab/http:dev}]
      """
    Then within 30s the scheduler bound pod "web" to node "worker-3", its highest total score
    And the scheduler filtered node "worker-1" out of pod "web" with Extender
    And the expression "scheduling('web').scores['worker-3']['Extender'] == 100 && scheduling('web').scores['worker-2']['Extender'] == 0 && scheduling('web').weights['Extender'] == 5" holds
