@jobs
Feature: Jobs run Pods to completion
  Question: How does a Job differ from a Deployment? What do completions,
  parallelism, backoffLimit and ttlSecondsAfterFinished control?

  Model answer:
    A Deployment keeps N Pods running forever; a Job wants Pods that finish.
    The Job controller (in kube-controller-manager) creates Pods until
    completions of them have succeeded, with at most parallelism running at
    a time; Pods use restartPolicy Never or OnFailure. A failed Pod is
    replaced (with exponential back-off) until backoffLimit failures, then
    the Job fails with reason BackoffLimitExceeded; activeDeadlineSeconds
    bounds its whole run. When done, the Job gets the Complete condition and
    its Pods stay for their logs; with ttlSecondsAfterFinished the
    TTL-after-finished controller deletes the Job, and its Pods with it,
    that long after it finished. A CronJob creates Jobs on a schedule.

  Key points:
    - A Job runs Pods until a number of them (completions) have succeeded, parallelism at a time.
      terms: completion, 完成数 | parallelism, 并行
    - Its Pods use restartPolicy Never or OnFailure; a Deployment's run forever.
      terms: restartpolicy, restart policy, never, onfailure, 重启策略
    - A failed Pod is replaced until backoffLimit failures, then the Job fails (BackoffLimitExceeded).
      terms: backofflimit, backoff limit, back-off, 重试次数
    - When done the Job gets the Complete condition; ttlSecondsAfterFinished deletes it later.
      terms: complete, 完成 | ttlsecondsafterfinished, ttl
      evidence: timeline pod

  Scenario: Four completions, two at a time, then cleaned up
    On simulated nodes a Job's Pod succeeds a moment after it starts.

    Given a lab cluster with 2 workers
    When I apply:
      """
      apiVersion: batch/v1
      kind: Job
      metadata: {name: batch}
      spec:
        completions: 4
        parallelism: 2
        ttlSecondsAfterFinished: 5
        template:
          metadata: {labels: {app: batch}}
          spec:
            restartPolicy: Never
            containers: [{name: work, image: kubelab/http:dev, args: [work, 1s]}]
      """
    Then within 60s kubectl "get job batch -o jsonpath={.status.succeeded}" prints "^4$"
    And kubectl "get job batch -o jsonpath={.status.conditions[*].type}" prints "Complete"
    And the expression "len(filter(pods('app=batch'), .phase == 'Succeeded')) == 4" holds
    And the expression "len(pods('app=batch')) == 0" holds within 40s
