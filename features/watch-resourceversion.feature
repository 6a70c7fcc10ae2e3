@watch
Feature: Watches, resourceVersion and 410 Gone
  Question: How do controllers learn about changes without polling the
  apiserver? What is a resourceVersion, and what does a watch that fails
  with "410 Gone" mean?

  Model answer:
    Clients list, then watch. A LIST returns the objects and a
    resourceVersion; GET ...?watch=1&resourceVersion=RV then streams every
    change after RV (ADDED, MODIFIED, DELETED) over one long-lived HTTP
    response. client-go's informers wrap this: list, watch, a local cache
    (indexer) and event handlers, so controllers read their cache and never
    poll.
    A resourceVersion is etcd's revision: etcd keeps every version of every
    key (MVCC) and can replay changes from any revision it still has, which
    is what watches are built on. It is also the basis of optimistic
    concurrency: an update carrying a stale resourceVersion is rejected
    with 409 Conflict, so read-modify-write races do not lose updates.
    etcd cannot keep every version forever: the apiserver compacts it
    (every 5 minutes by default), removing revisions older than the last
    compaction. A watch from a compacted resourceVersion is answered with
    410 Gone ("too old resource version"); the client must list again and
    watch from the new resourceVersion, which informers do by themselves.
    The apiserver's watch cache serves recent history for most resources
    from memory, so its window matters too; bookmarks keep idle watchers'
    resourceVersions fresh.

  Key points:
    - Clients list, then watch from the list's resourceVersion; informers keep a local cache.
      terms: list, 列表 | watch, 监听 | resourceversion, resource version, 资源版本
    - A resourceVersion is etcd's revision: MVCC keeps every version, which watches replay.
      terms: revision, mvcc, 修订, 多版本
    - An update with a stale resourceVersion gets 409 Conflict: optimistic concurrency.
      terms: 409, conflict, optimistic, 冲突, 乐观
    - Compaction removes old revisions; a watch from a compacted one gets 410 Gone and must relist.
      terms: compact, 压缩 | 410, gone, too old

  Scenario: Replay, conflict, and a watch from a compacted revision
    The apiserver compacts etcd every 5s here (etcd compaction interval 5s;
    upstream 5m). The watches are on Events, for which the apiserver keeps
    no watch cache: they read etcd's history directly.

    Given a lab cluster
    And etcd compaction interval 5s
    When I apply:
      """
      apiVersion: v1
      kind: Event
      metadata: {name: probe}
      involvedObject: {kind: ConfigMap, name: probe, namespace: default}
      reason: Probe
      message: first
      """
    And I run kubectl "get event probe -o jsonpath={.metadata.resourceVersion}"
    And I save the output as "old"
    And I patch Event "probe" with:
      """
      message: second
      """
    Then kubectl "get --raw '/api/v1/namespaces/default/events?watch=1&resourceVersion=${old}&timeoutSeconds=1'" prints "MODIFIED.*second"
    When I run kubectl "replace -f -" with the manifest:
      """
      apiVersion: v1
      kind: Event
      metadata: {name: probe, resourceVersion: "${old}"}
      involvedObject: {kind: ConfigMap, name: probe, namespace: default}
      reason: Probe
      message: a stale update
      """
    Then it fails
    And the output matches "Conflict|the object has been modified"
    And within 30s kubectl "get --raw '/api/v1/namespaces/default/events?watch=1&resourceVersion=${old}&timeoutSeconds=1'" prints "410|Expired|too old"
    And kubectl "get event probe -o jsonpath={.message}" prints "^second$"
