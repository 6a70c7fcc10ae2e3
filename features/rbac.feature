@rbac
Feature: RBAC: who may do what
  Question: A ServiceAccount must be able to read Pods in its namespace but
  not delete them. How do you grant that, and how do you check it?

  Model answer:
    After authentication (who is asking: here the ServiceAccount
    system:serviceaccount:default:reader, proven by its token) comes
    authorization, usually RBAC. RBAC only allows; there are no deny rules,
    and anything not granted is forbidden.
    - A Role lists rules (API groups, resources, verbs such as get, list,
      watch, create, delete) within one namespace; a ClusterRole does the
      same cluster-wide or for reuse.
    - A RoleBinding grants a Role (or ClusterRole) to subjects (users,
      groups, ServiceAccounts) in its namespace; a ClusterRoleBinding grants
      everywhere. Aggregated ClusterRoles combine others by label.
    So: a Role pod-reader with verbs get, list, watch on pods, and a
    RoleBinding of it to the ServiceAccount. Check with kubectl auth can-i
    (a SubjectAccessReview), impersonating the subject with --as. Follow
    least privilege: no wildcards, no cluster-wide grants where a namespace
    is enough; over-broad bindings are a classic security hole, missing
    ones a classic outage.

  Key points:
    - Authentication says who asks; authorization (RBAC) decides what they may do.
      terms: authenticat, authn, 认证 | authoriz, 授权, authz
    - RBAC only allows: there are no deny rules, anything not granted is forbidden.
      terms: only allow, no deny, not granted is forbidden, default deny, 只允许, 没有拒绝, 默认拒绝
    - A Role lists verbs on resources in a namespace; a ClusterRole does so cluster-wide.
      terms: role, 角色 | verb, get, list, watch, 动词
    - A RoleBinding grants a Role to subjects such as a ServiceAccount; a ClusterRoleBinding everywhere.
      terms: rolebinding, role binding, 角色绑定 | serviceaccount, service account, subject, 服务账号
    - Check with kubectl auth can-i (impersonating with --as), and follow least privilege.
      terms: auth can-i, can-i, can i, subjectaccessreview | least privilege, 最小权限

  Scenario: A ServiceAccount that may read Pods but not delete them
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
      - apiGroups: [""]
        resources: [pods]
        verbs: [get, list, watch]
      ---
      apiVersion: rbac.authorization.k8s.io/v1
      kind: RoleBinding
      metadata: {name: reader-reads-pods}
      subjects: [{kind: ServiceAccount, name: reader}]
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
      """
    Then within 15s kubectl "auth can-i list pods --as=system:serviceaccount:${NAMESPACE}:reader" prints "^yes$"
    When I run kubectl "auth can-i delete pods --as=system:serviceaccount:${NAMESPACE}:reader"
    Then it fails
    And the output matches "^no$"
    And kubectl "get pods --as=system:serviceaccount:${NAMESPACE}:reader" succeeds
    And kubectl "delete pod anything --as=system:serviceaccount:${NAMESPACE}:reader" fails with "Forbidden.*cannot delete resource"
    And kubectl "auth can-i list pods -n kube-system --as=system:serviceaccount:${NAMESPACE}:reader" fails with "^no$"
