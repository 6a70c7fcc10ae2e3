@docker @cri
Feature: CRI and the pause sandbox
  Question: How does the kubelet start a Pod's containers, and what is the
  pause container for?

  Model answer:
    The kubelet does not run containers: it calls the container runtime
    (containerd, CRI-O) over the CRI, a gRPC API on a local socket. For a
    Pod it calls RunPodSandbox first: the runtime starts the pause
    container, whose process only sleeps and reaps, and creates the Pod's
    network namespace, where the CNI plugin sets up the Pod's interface and
    IP. Then, for each container, PullImage if needed, CreateContainer and
    StartContainer: the container's process joins the sandbox's network
    (and IPC) namespace. So all containers of a Pod share one IP and reach
    each other on localhost, and a container that restarts keeps the IP:
    the namespace belongs to the sandbox, not to any app container.
    Deleting the Pod stops the containers, then StopPodSandbox and
    RemovePodSandbox.

  Key points:
    - The kubelet does not run containers: it calls the runtime (containerd) over the CRI, a gRPC API.
      terms: cri, container runtime interface | containerd, runtime, grpc, 运行时
    - RunPodSandbox starts the pause container and creates the Pod's network namespace.
      terms: sandbox, 沙箱 | pause | network namespace, namespace, 命名空间
      evidence: timeline pod
    - Then PullImage, CreateContainer and StartContainer: the containers join the sandbox's namespaces.
      terms: createcontainer, startcontainer, pullimage, create container, start container, pull, 创建容器, 启动容器
    - All containers of a Pod share one IP and localhost; a restarted container keeps the IP.
      terms: share, same ip, one ip, 共享 | localhost, keeps the ip, 同一个 ip, 保留

  Scenario: One sandbox, two containers, one network namespace
    Given a lab cluster with 1 worker
    When I apply:
      """
      apiVersion: v1
      kind: Pod
      metadata: {name: duo}
      spec:
        containers:
        - {name: web, image: kubelab/http:dev, imagePullPolicy: Never}
        - {name: sidecar, image: kubelab/http:dev, imagePullPolicy: Never, env: [{name: PORT, value: "9090"}]}
      """
    Then the expression "pod('duo').ready" holds within 60s
    And the expression "one(cri('worker-1').sandboxes, .pod == 'duo' && .state == 'SANDBOX_READY' && .ip == pod('duo').ip)" holds within 20s
    And the expression "let sb = first(filter(cri('worker-1').sandboxes, .pod == 'duo')); all(filter(cri('worker-1').containers, .sandboxId == sb.id), .netns == sb.netns && .pid != sb.pid)" holds
    And kubectl "exec duo -c sidecar -- /kubelab-http get http://127.0.0.1:8080/readyz" prints "ready"
