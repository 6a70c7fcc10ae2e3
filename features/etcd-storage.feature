@etcd-raft
Feature: What etcd holds, and whether Secrets are encrypted
  Question: How does the apiserver store objects in etcd? Where would you
  find a Secret there, in what form, and is it encrypted? What does an
  object's resourceVersion mean to etcd?

  Model answer:
    etcd is a flat key-value store, and the apiserver is the only
    component that talks to it. Every object is one key,
    /registry/RESOURCE/NAMESPACE/NAME (/registry/RESOURCE/NAME when
    cluster-scoped), so a Secret db in the namespace default is
    /registry/secrets/default/db; Nodes still live under
    /registry/minions/. The value is not the JSON kubectl shows but
    Kubernetes' protobuf encoding: the bytes k8s\0 followed by an envelope
    with apiVersion, kind and the object.

    A Secret's data is only base64 in the API, an encoding and not
    encryption. Unless the apiserver runs with
    --encryption-provider-config (aescbc, aesgcm, secretbox or a KMS
    plugin; the stored value then starts with k8s:enc:), etcd holds the
    plain bytes, and so does every etcd snapshot: anyone who can read
    etcd or its backups reads every Secret. So etcd's client port takes
    only mutual TLS, backups are protected, and encryption at rest is
    turned on in production.

    etcd is MVCC: every write gets the next revision of the whole store,
    and an object's resourceVersion is its key's mod_revision. An update
    writes a new revision and the old value stays readable at the old
    revision (etcdctl get --rev) until compaction; that history is what
    watches replay from, and what 410 Gone says is gone.

  Key points:
    - Every object is one key under /registry/RESOURCE/NAMESPACE/NAME, written only by the apiserver.
      terms: /registry, registry | apiserver, api server, only client, 唯一
    - Values are Kubernetes' protobuf encoding, not the JSON kubectl shows.
      terms: protobuf, protocol buffer, binary, 二进制
    - A Secret is only base64 in the API: etcd and its snapshots hold it in plain bytes.
      terms: base64 | not encrypted, plain, unencrypted, plaintext, 明文, 未加密, 没有加密, 不加密
    - Encryption at rest needs --encryption-provider-config (aescbc, aesgcm, KMS), and etcd needs mutual TLS.
      terms: encryption-provider-config, encryptionconfiguration, encryption at rest, kms, aescbc, aesgcm, 静态加密, 加密配置 | tls, certificate, 证书, backup, 备份
    - An object's resourceVersion is its key's mod_revision; old revisions stay readable until compaction.
      terms: revision, mod_revision, 修订, 版本号 | compact, mvcc, history, old value, 压缩, 历史, 多版本

  Scenario: A Secret and a ConfigMap, read from etcd itself
    etcdctl runs here with the cluster's etcd client certificate: the
    apiserver's own access, which any reader of etcd would have.

    Given a lab cluster
    When I apply:
      """
      apiVersion: v1
      kind: Secret
      metadata: {name: db}
      stringData: {password: s3cr3t-pw}
      ---
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: app}
      data: {color: blue}
      """
    And I run etcdctl "get /registry/ --prefix --keys-only"
    Then the output matches "/registry/secrets/default/db"
    And kubectl "get secret db -o jsonpath={.data.password}" prints "^czNjcjN0LXB3$"
    When I run etcdctl "get /registry/secrets/default/db --print-value-only"
    Then the output matches "^k8s\x00(.|\n)*s3cr3t-pw"
    When I run kubectl "get configmap app -o jsonpath={.metadata.resourceVersion}"
    And I save the output as "rv"
    And I patch ConfigMap "app" with:
      """
      data: {color: green}
      """
    And I run etcdctl "get /registry/configmaps/default/app --rev=${rv} --print-value-only"
    Then the output matches "blue"
    When I run etcdctl "get /registry/configmaps/default/app --print-value-only"
    Then the output matches "green"
