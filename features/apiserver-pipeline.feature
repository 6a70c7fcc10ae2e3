@apiserver-pipeline
Feature: The apiserver request pipeline
  Question: A request reaches kube-apiserver. Which stages does it go
  through before anything is written to etcd, in which order, and how can
  you tell at which stage a refused request was stopped?

  Model answer:
    In order: authentication (who is it? a client certificate, a bearer or
    ServiceAccount token, OIDC; failing it is 401 Unauthorized),
    authorization (may they do this verb on this resource? RBAC, Node;
    forbid is 403 Forbidden with the reason), mutating admission (plugins,
    policies and webhooks that may change the object: defaults,
    sidecars), schema and field validation (422 Invalid, naming the field),
    validating admission (ValidatingAdmissionPolicy, webhooks, PodSecurity:
    a refusal names the policy), and only then the write to etcd, after
    which watchers (controllers, kubelets) are told through their watches.
    Reads skip admission. A request stopped at a stage never reaches the
    next, so a forbidden request is never validated and an invalid object
    never reaches a policy. The apiserver's audit log records every request
    with the user and groups, the authorization decision and reason, the
    admission annotations and the response code, which is how you tell the
    stages apart after the fact.

  Key points:
    - Authentication comes first: who is it (certificate, token); failing it is 401.
      terms: authenticat, authn, 认证 | 401, unauthorized, who
    - Authorization next: may they do this verb on this resource (RBAC); refused is 403 Forbidden.
      terms: authoriz, authz, rbac, 授权, 鉴权 | 403, forbidden, 禁止
    - Then mutating admission, schema validation (422 Invalid) and validating admission, and only then etcd.
      terms: mutating, 变更 | validat, 校验, 验证 | etcd
    - A request stopped at a stage never reaches the next one.
      terms: never reaches, stops, stopped, does not reach, 不会到达, 停止, 短路, 不会执行, 不再继续, 不会继续, 后面阶段不会, 后面步骤不会
    - The audit log records every request with its user, decision and response code.
      terms: audit, 审计

  Scenario: One request refused at each stage, read back from the audit log
    Given a lab cluster
    When I apply:
      """
      apiVersion: v1
      kind: ServiceAccount
      metadata: {name: reader}
      ---
      apiVersion: rbac.authorization.k8s.io/v1
      kind: Role
      metadata: {name: pod-reader}
      rules:
      - {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
      ---
      apiVersion: rbac.authorization.k8s.io/v1
      kind: RoleBinding
      metadata: {name: reader-reads-pods}
      subjects: [{kind: ServiceAccount, name: reader, namespace: default}]
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
      ---
      apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingAdmissionPolicy
      metadata: {name: max-replicas}
      spec:
        failurePolicy: Fail
        matchConstraints:
          resourceRules:
          - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
        validations:
        - {expression: "object.spec.replicas <= 5", message: "at most 5 replicas"}
      ---
      apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingAdmissionPolicyBinding
      metadata: {name: max-replicas}
      spec: {policyName: max-replicas, validationActions: [Deny]}
      """
    Then within 15s kubectl "get pods --as=system:serviceaccount:default:reader" succeeds
    And kubectl "delete pod anything --as=system:serviceaccount:default:reader" fails with "Forbidden"
    And within 15s kubectl "create deployment big --image=kubelab/http:dev --replicas=10" fails with "ValidatingAdmissionPolicy 'max-replicas'"
    And kubectl "create configmap Bad_Name --from-literal=a=b" fails with "is invalid"
    Then the expression "any(audit({user: 'system:serviceaccount:default:reader', verb: 'list', resource: 'pods'}), .code == 200 && .decision == 'allow' && .why contains 'RoleBinding')" holds within 10s
    And the expression "any(audit({user: 'system:serviceaccount:default:reader', verb: 'delete'}), .refusal == 'authorization' && .code == 403)" holds
    And the expression "any(audit({verb: 'create', resource: 'deployments', name: 'big'}), .decision == 'allow' && .refusal == 'admission' && .refusedBy == 'ValidatingAdmissionPolicy/max-replicas')" holds
    And the expression "any(audit({verb: 'create', resource: 'configmaps', name: 'Bad_Name'}), .refusal == 'validation' && .code == 422)" holds
