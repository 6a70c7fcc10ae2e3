@etcd-backup
Feature: etcd backup and restore
  Question: You took an etcd snapshot, then objects were created and
  deleted. What does restoring the snapshot give you back, and what
  happens to the cluster and its clients?

  Model answer:
    A snapshot (etcdctl snapshot save) is one member's bbolt database
    copied in one read transaction: the whole key space as of one
    revision, with a hash appended. Restoring (etcdutl snapshot restore)
    makes a fresh data directory per member that boots a NEW etcd
    cluster: every member restores the same snapshot, so they all start
    from the same data at the same Raft index, and a new
    --initial-cluster-token gives new member IDs and a new cluster ID, so
    no member with old data can rejoin. Everything written after the
    snapshot is gone and everything deleted after it is back.
    The revision (the resourceVersion) would go back to the snapshot's:
    watchers would resume from revisions that now mean other writes, and
    caches would keep the lost past. So restore with --bump-revision and
    --mark-compacted: resumed watches get 410 Gone and relist, new
    resourceVersions are larger than any seen. Stop the apiservers before
    the restore and start them after, so no watch cache outlives the old
    data. Compaction (the apiserver's every 5 minutes, or etcd's
    --auto-compaction-retention) decides how much history a snapshot
    carries.

  Key points:
    - A snapshot is one member's database copied at one revision.
      terms: snapshot, 快照 | revision, database, bbolt, key space, 版本, 数据库
    - Restoring makes a new etcd cluster: every member restores the same snapshot, with new member and cluster IDs.
      terms: restore, 恢复 | new cluster, new member, cluster id, initial-cluster-token, 新集群
    - Everything written after the snapshot is lost, everything deleted after it is back.
      terms: written after, lost, gone, 丢失 | deleted after, is back, comes back, 回来, 重新出现, 又出现, 复活, are back, reappear
    - Bump the revision and mark it compacted, so watchers relist (410 Gone) instead of resuming from revisions that now mean other writes.
      terms: bump-revision, bump revision, mark-compacted, mark compacted, 410, relist
    - Stop the apiservers before the restore and start them after.
      terms: stop the apiserver, stop apiserver, apiservers before, 停止 apiserver, 停止, 停掉, 关掉, 关闭

  Scenario: Restore a snapshot over later writes and deletes
    Given a lab cluster with 3 etcd members
    And within 30s the etcd cluster has quorum
    When I apply:
      """
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: backup-a}
      data: {written: before}
      ---
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: backup-b}
      data: {written: before}
      """
    And I take an etcd snapshot "before"
    Then the expression "before.revision > 0 && before.size > 0" holds
    When I run kubectl "create configmap backup-c --from-literal=written=after"
    And I delete ConfigMap "backup-a"
    And I restore etcd from snapshot "before"
    Then within 30s the etcd cluster has quorum
    And within 30s kubectl "get configmap backup-a -o jsonpath={.data.written}" prints "^before$"
    And kubectl "get configmap backup-b" succeeds
    And kubectl "get configmap backup-c" fails with "NotFound|not found"
    And within 30s kubectl "create configmap backup-d --from-literal=written=after-restore" succeeds
