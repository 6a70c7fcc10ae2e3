@admission
Feature: Admission: validation and policies
  Question: Where in the apiserver's request pipeline are objects checked,
  and how would you enforce "no Deployment may have more than 5 replicas"
  without writing a webhook?

  Model answer:
    The pipeline of a write: authentication, authorization, mutating
    admission (defaults, injected sidecars, MutatingAdmissionPolicies and
    webhooks), schema validation (types, required fields, value ranges from
    the OpenAPI schema and the resource's own checks), validating admission
    (ValidatingAdmissionPolicies, validating webhooks, OPA/Gatekeeper or
    Kyverno), and only then the write to etcd. Decoding comes first of all:
    with strict field validation (kubectl apply --validate=strict, the
    default for kubectl) an unknown or misspelt field is rejected before any
    admission runs, instead of being silently dropped.
    A rule like "at most 5 replicas" is a ValidatingAdmissionPolicy: a CEL
    expression (object.spec.replicas <= 5) evaluated inside the apiserver,
    with no webhook to run or keep available, plus a
    ValidatingAdmissionPolicyBinding that turns it on (validationActions:
    Deny, Warn or Audit). Match the scale subresource too, or kubectl scale
    walks around it. Policies reach every apiserver through informers, so a
    new policy takes effect within a second or so, not at the instant it is
    created.

  Key points:
    - A write passes authentication, authorization, mutating admission, schema validation and validating admission before it reaches etcd.
      terms: authenticat, authn, 认证 | authoriz, authz, rbac, 授权, 鉴权, 权限检查 | mutating, mutation, 变更准入, 修改, 变更 | validat, 校验, 验证
    - Strict field validation rejects an unknown or misspelt field before any admission runs.
      terms: unknown field, misspelt, misspelled, typo, strict, 未知字段, 拼写, 严格字段, 写错, 拼错, 错误字段, 不存在字段 | reject, refuse, 拒绝, 拒掉, 驳回
    - A rule such as "at most 5 replicas" is a ValidatingAdmissionPolicy: a CEL expression inside the apiserver, no webhook.
      terms: validatingadmissionpolicy, admission policy, cel, 准入策略 | cel, expression, 表达式
    - The policy acts through a binding (Deny, Warn or Audit) and must match the scale subresource too.
      terms: binding, validatingadmissionpolicybinding, 绑定 | scale, subresource, 子资源
    - A new policy takes effect within about a second, once every apiserver's informer has it.
      terms: informer, a second, second or so, not at once, not immediately, 一秒, 生效

  Scenario: A policy caps replicas; schema validation catches the rest
    Given a lab cluster
    When I apply:
      """
      apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingAdmissionPolicy
      metadata: {name: max-replicas}
      spec:
        failurePolicy: Fail
        matchConstraints:
          resourceRules:
          - apiGroups: [apps]
            apiVersions: [v1]
            operations: [CREATE, UPDATE]
            resources: [deployments, deployments/scale]
        validations:
        - expression: "object.spec.replicas <= 5"
          message: "a Deployment may have at most 5 replicas"
      ---
      apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingAdmissionPolicyBinding
      metadata: {name: max-replicas}
      spec:
        policyName: max-replicas
        validationActions: [Deny]
      """
    Then within 15s kubectl "create deployment big --image=kubelab/http:dev --replicas=10 --dry-run=server" fails with "at most 5 replicas"
    And kubectl "create deployment small --image=kubelab/http:dev --replicas=3" succeeds
    And kubectl "scale deployment small --replicas=8" fails with "at most 5 replicas"
    When I run kubectl "apply --validate=strict -f -" with the manifest:
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: typo}
      spec:
        replicas: 10
        replica: 1
        selector: {matchLabels: {app: typo}}
        template:
          metadata: {labels: {app: typo}}
          spec: {containers: [{name: app, image: kubelab/http:dev}]}
      """
    Then it fails
    And the output matches "unknown field \"spec.replica\""
    When I run kubectl "apply -f -" with the manifest:
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: negative}
      spec:
        replicas: -1
        selector: {matchLabels: {app: negative}}
        template:
          metadata: {labels: {app: negative}}
          spec: {containers: [{name: app, image: kubelab/http:dev}]}
      """
    Then it fails
    And the output matches "spec.replicas: Invalid value: -1"
