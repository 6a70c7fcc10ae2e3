@docker @probes
Feature: Liveness and readiness probes
  Question: What is the difference between a liveness and a readiness
  probe? What happens when each fails?

  Model answer:
    Both are run by the kubelet on its node (HTTP GET, TCP, exec or gRPC),
    every periodSeconds, failing after failureThreshold failures.
    Readiness says whether the Pod should get traffic: when it fails the
    kubelet sets the Ready condition to False, the EndpointSlice controller
    marks the endpoint not ready and kube-proxy drops it from the Service;
    nothing restarts, and it comes back when the probe passes. Liveness
    says whether the container is alive: when it fails the kubelet kills
    and restarts the container (restartCount grows, in the same sandbox and
    IP). A startup probe holds both off until a slow start is over. A
    liveness probe that checks dependencies restarts healthy Pods in a
    cascade: keep it about the process itself.

  Key points:
    - The kubelet runs the probes on its node (HTTP, TCP, exec, gRPC) every periodSeconds, failing after failureThreshold.
      terms: kubelet | periodseconds, failurethreshold, period, threshold, 周期, 阈值
    - A failing readiness probe takes the Pod out of the Service's endpoints; nothing restarts.
      terms: readiness, 就绪 | endpoint, traffic, service, 流量, 端点
      evidence: timeline endpoints
    - A failing liveness probe makes the kubelet restart the container (restartCount grows).
      terms: liveness, 存活 | restart, 重启
    - A startup probe holds both off during a slow start.
      terms: startup, 启动探针
    - A liveness probe must not check dependencies, or it restarts healthy Pods in a cascade.
      terms: dependenc, 依赖 | cascade, healthy, 级联, 连锁

  Scenario: A failing readiness probe takes a Pod out of its Service
    Given a lab cluster with 1 worker
    When I apply:
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 2
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers:
            - name: web
              image: kubelab/http:dev
              imagePullPolicy: Never
              readinessProbe: {httpGet: {path: /readyz, port: 8080}, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 1}
              livenessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 2}
      ---
      apiVersion: v1
      kind: Service
      metadata: {name: web}
      spec:
        selector: {app: web}
        ports: [{port: 80, targetPort: 8080}]
      """
    Then the expression "len(endpoints('web')) == 2" holds within 60s
    When I record the expression "pods('app=web')[0].name" as "victim"
    And I run kubectl "get pods -l app=web -o jsonpath={.items[0].metadata.name}"
    And I save the output as "victim"
    And I run kubectl "exec ${victim} -- /kubelab-http break readiness"
    Then the expression "len(endpoints('web')) == 1 && !pod(victim).ready && pod(victim).restarts == 0" holds within 30s
    When I run kubectl "exec ${victim} -- /kubelab-http break liveness"
    Then the expression "pod(victim).restarts >= 1" holds within 60s
    And the expression "len(endpoints('web')) == 2" holds within 60s
