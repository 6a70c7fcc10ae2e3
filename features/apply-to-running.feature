@apply-to-running
Feature: kubectl apply to a Running Pod, hop by hop
  Question: You run `kubectl apply -f web.yaml` for a Deployment of 3
  replicas behind a Service. Walk through everything that happens until the
  Pods are Running and the Service sends them traffic.

  Model answer:
    1. kubectl parses and checks the YAML locally, serialises it to JSON and
       sends it over HTTPS to the apiserver (through the load balancer in an
       HA control plane).
    2. The apiserver runs its request pipeline: authentication (who is this:
       client certificate, bearer or ServiceAccount token, OIDC),
       authorization (may they do it: RBAC), mutating admission (defaults,
       injected sidecars), schema validation (OpenAPI types and required
       fields), validating admission (policies, webhooks). Then it writes the
       Deployment to etcd, where the Raft leader commits it once a majority
       has it, and answers 201 Created.
    3. No component calls another: each one watches the apiserver. The
       Deployment controller (in kube-controller-manager) sees the new
       Deployment and creates a ReplicaSet; the ReplicaSet controller sees
       that and creates 3 Pods with an empty spec.nodeName.
    4. The scheduler sees the unscheduled Pods. For each it filters the nodes
       (resources, nodeSelector, taints and tolerations, affinity), scores
       the ones left, and binds the Pod to the best one by setting
       spec.nodeName.
    5. The kubelet of that node sees a Pod bound to it and, over CRI, asks
       the container runtime (containerd) to create the pod sandbox (the
       pause container holding the network namespace), pull the image, and
       create and start the containers. It reports the status back: phase
       Running, the pod IP, and Ready once the readiness probe passes.
    6. The EndpointSlice controller adds the ready Pods to the Service's
       EndpointSlices, and kube-proxy on every node programs iptables, IPVS
       or nftables rules, so the Service's ClusterIP now reaches the Pods.
    Each controller is a level-triggered reconcile loop: observe, compare
    desired with actual state, act on the difference. The whole chain takes
    from under a second to tens of seconds, mostly image pulls.

  Key points:
    - The apiserver runs its pipeline (authentication, authorization, admission, validation) and writes the Deployment to etcd.
      terms: apiserver, api server | etcd
    - Controllers watch, not call: the Deployment controller makes a ReplicaSet, the ReplicaSet controller makes the Pods.
      terms: replicaset, 副本集 | controller, 控制器 | watch, 监听
      evidence: timeline object
    - The scheduler filters and scores nodes and binds each Pod (spec.nodeName).
      terms: scheduler, 调度器 | bind, nodename, 绑定
    - The kubelet asks the runtime over CRI for a sandbox (pause) and the containers, then reports Running.
      terms: kubelet | cri, containerd, runtime, sandbox, pause, 运行时, 沙箱
      evidence: timeline pod
    - The EndpointSlice controller and kube-proxy make the Service reach the ready Pods.
      terms: endpointslice, endpoint, 端点 | kube-proxy, iptables, ipvs

  Scenario: A Deployment of 3 replicas behind a Service
    Each step waits for one hop; the timeline shows when each one happened.
    The simulated kubelets pull no images, so their hop takes milliseconds.

    Given a lab cluster with 2 workers
    When I apply the file "manifests/web.yaml"
    Then the expression "deployment('web').exists && deployment('web').replicas == 3" holds
    And the expression "len(replicasets('app=web')) == 1 && replicasets('app=web')[0].owner == 'Deployment/web'" holds within 20s
    And the expression "len(pods('app=web')) == 3 && all(pods('app=web'), .owner startsWith 'ReplicaSet/')" holds within 20s
    And the expression "all(pods('app=web'), .node in ['worker-1', 'worker-2'])" holds within 20s
    And the expression "any(events('Scheduled'), .object startsWith 'web-')" holds within 10s
    And within 30s 3 pods labelled "app=web" are Running
    And the expression "all(pods('app=web'), .ip != '')" holds
    And the expression "len(endpoints('web')) == 3" holds within 30s
    And the expression "sort(map(endpoints('web'), .ip)) == sort(map(pods('app=web'), .ip))" holds
