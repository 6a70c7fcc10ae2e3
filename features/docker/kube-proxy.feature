@docker @kube-proxy
Feature: How a ClusterIP reaches a Pod
  Question: Nothing listens on a Service's ClusterIP. How does a packet
  sent to it reach one of the Pods, and what changes for a NodePort? What
  are kube-proxy's modes?

  Model answer:
    kube-proxy runs on every node, watches Services and EndpointSlices and
    programs the node's kernel; it is not in the data path itself. In
    iptables mode: the nat chain KUBE-SERVICES matches the ClusterIP and
    port and jumps to the Service's KUBE-SVC-... chain, which picks one
    KUBE-SEP-... chain per ready endpoint with random probabilities, and
    each KUBE-SEP chain DNATs to the Pod's IP and port; conntrack keeps the
    connection on that Pod. A NodePort adds a rule in KUBE-NODEPORTS for
    the port on every node's addresses, leading to the same chain. Only
    ready endpoints appear, which is how readiness takes a Pod out of
    traffic. IPVS mode uses kernel virtual servers (hash tables, several
    balancing algorithms; better at thousands of Services); nftables mode
    writes the same logic as nft sets and maps; iptables rules are
    evaluated one after another.

  Key points:
    - kube-proxy watches Services and EndpointSlices and programs the node's kernel; it is not in the data path.
      terms: kube-proxy | watch, program, endpointslice, 监听, 编程
    - In iptables mode KUBE-SERVICES jumps to the Service's KUBE-SVC chain, which picks a KUBE-SEP chain at random.
      terms: kube-services, kube-svc, kube-sep, chain, 链 | random, probabilit, 随机, 概率
    - Each KUBE-SEP chain DNATs to a Pod's IP and port; conntrack keeps the connection there.
      terms: dnat, nat, 地址转换 | conntrack, 连接跟踪
    - Only ready endpoints appear, which is how readiness takes a Pod out of traffic.
      terms: ready, readiness, 就绪
    - IPVS and nftables modes do the same with hash tables, sets and maps.
      terms: ipvs | nftables, hash, 哈希

  Scenario: Three endpoints, one chain each, then one
    Given a lab cluster with 2 workers
    When I apply:
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 3
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers: [{name: web, image: kubelab/http:dev, imagePullPolicy: Never}]
      ---
      apiVersion: v1
      kind: Service
      metadata: {name: web}
      spec:
        type: NodePort
        selector: {app: web}
        ports: [{port: 80, targetPort: 8080}]
      """
    Then within 60s deployment "web" has 3 available replicas
    And the expression "len(iptables('worker-1').services['default/web'].seps) == 3 && iptables('worker-1').services['default/web'].nodePort" holds within 30s
    And the expression "iptables('worker-2').services['default/web'].endpoints == sort(map(endpoints('web'), .ip + ':8080'))" holds within 30s
    When I scale deployment "web" to 1 replicas
    Then the expression "len(iptables('worker-1').services['default/web'].seps) == 1" holds within 30s
