@controllers
Feature: A namespace stuck in Terminating
  Question: You deleted a namespace an hour ago and it still says
  Terminating. What happens when a namespace is deleted, why can it hang,
  how do you find the cause, and how do you fix it safely?

  Model answer:
    Deleting a namespace only sets its deletionTimestamp: the apiserver
    marks it Terminating and keeps the namespace's own finalizer,
    "kubernetes" (spec.finalizers). The namespace controller in
    kube-controller-manager then discovers every namespaced resource type,
    deletes every object in the namespace, and removes that finalizer only
    when nothing is left; then the namespace is gone.

    It hangs when something cannot be deleted: an object carries a
    finalizer whose controller is gone or stuck (a CRD's operator was
    uninstalled first, a PV protection, a custom finalizer), or discovery
    fails because an aggregated APIService is unavailable, so the
    controller cannot know what to delete. The namespace's status
    conditions say which: NamespaceContentRemaining and
    NamespaceFinalizersRemaining name the resources and finalizers left,
    NamespaceDeletionDiscoveryFailure the failing API group
    (kubectl get namespace NAME -o yaml).

    The safe fix is to remove the cause: bring the finalizer's controller
    back or let it finish, remove the finalizer from the stuck object if
    nothing needs it anymore, or fix or delete the broken APIService.
    Forcing the namespace's own "kubernetes" finalizer away through
    /finalize makes the namespace disappear but leaves its objects
    orphaned in etcd, where they come back if a namespace of that name is
    created again.

  Key points:
    - Deleting a namespace only marks it Terminating; its "kubernetes" finalizer keeps it until the contents are gone.
      terms: terminating, deletiontimestamp, 删除时间戳 | finalizer, 终结器, finalizers
    - The namespace controller deletes every object inside, then removes that finalizer.
      terms: namespace controller, controller-manager, controller manager, 命名空间控制器, 控制器 | delete, deletes, 删除
    - It hangs on an object whose finalizer nobody removes, or on an unavailable APIService that breaks discovery.
      terms: finalizer, 终结器 | apiservice, discovery, operator, crd, 发现, 聚合
    - The namespace's status conditions name what is left (NamespaceContentRemaining, NamespaceFinalizersRemaining).
      terms: condition, status, namespacecontentremaining, namespacefinalizersremaining, 状态, 条件
    - Fix the cause; forcing the namespace's finalizer away leaves its objects orphaned in etcd.
      terms: remove the finalizer, fix the cause, bring back, 移除, 删掉 | orphan, left behind, leftover, etcd, 残留, 孤儿

  Scenario: A ConfigMap with a finalizer holds its namespace in Terminating
    Given a lab cluster
    When I apply:
      """
      apiVersion: v1
      kind: Namespace
      metadata: {name: team}
      ---
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: held, namespace: team, finalizers: [kubelab.dev/hold]}
      data: {a: b}
      """
    Then the expression "get('namespaces', 'team').spec.finalizers == ['kubernetes']" holds
    When I run kubectl "delete namespace team --wait=false"
    Then the expression "any(get('namespaces', 'team').status.conditions ?? [], .type == 'NamespaceFinalizersRemaining' && .status == 'True')" holds within 30s
    And the expression "get('namespaces', 'team').status.phase == 'Terminating'" holds
    And the expression "get('configmaps', 'held', 'team').metadata.deletionTimestamp != nil" holds
    When I run kubectl "patch configmap held -n team --type merge -p '{\"metadata\":{\"finalizers\":null}}'"
    Then the expression "get('namespaces', 'team') == nil" holds within 60s
