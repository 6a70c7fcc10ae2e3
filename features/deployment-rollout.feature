@controllers
Feature: Deployment rolling update and rollback
  Question: You change a Deployment's image. What do the Deployment and
  ReplicaSet controllers do, and how does a rollback work?

  Model answer:
    A change to the Pod template makes the Deployment controller create a
    new ReplicaSet (named after the template's hash) and scale it up while
    it scales the old one down, within maxSurge and maxUnavailable
    (25% each by default), so the service keeps running. Each ReplicaSet
    is a revision (annotation deployment.kubernetes.io/revision); old ones
    are kept at 0 replicas, up to revisionHistoryLimit (10). kubectl rollout
    undo points the Deployment back at the previous template: the old
    ReplicaSet is scaled up again under a new revision number. The
    ReplicaSet controller only ever keeps its own count of Pods matching
    its selector; it knows nothing of rollouts.

  Key points:
    - A template change makes a new ReplicaSet that is scaled up while the old one is scaled down.
      terms: new replicaset, replicaset, 副本集 | scale, scaled, 扩缩, 扩容, 缩容
      evidence: timeline object
    - maxSurge and maxUnavailable bound the rolling update, so the service keeps running.
      terms: maxsurge, maxunavailable, max surge, max unavailable, 最大
    - Each ReplicaSet is a revision; old ones stay at 0 replicas up to revisionHistoryLimit.
      terms: revision, 版本, 修订
    - Rollback (kubectl rollout undo) scales the previous ReplicaSet up again.
      terms: rollout undo, undo, rollback, roll back, 回滚

  Scenario: Update the image, then roll back
    Given a lab cluster with 2 workers
    When I apply:
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, labels: {app: web}}
      spec:
        replicas: 3
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers: [{name: web, image: kubelab/http:dev}]
      """
    Then within 30s deployment "web" has 3 available replicas
    When I run kubectl "set image deployment/web web=kubelab/http:v2"
    Then it succeeds
    And the expression "len(replicasets('app=web')) == 2 && deployment('web').available == 3" holds within 30s
    And within 30s kubectl "rollout status deployment/web --timeout=20s" prints "successfully rolled out"
    When I run kubectl "rollout undo deployment/web"
    Then it succeeds
    And within 30s kubectl "get deployment web -o jsonpath={.spec.template.spec.containers[0].image}" prints "^kubelab/http:dev$"
    And within 30s kubectl "get deployment web -o jsonpath={.metadata.annotations}" prints "revision.:.3"
    And within 30s deployment "web" has 3 available replicas
