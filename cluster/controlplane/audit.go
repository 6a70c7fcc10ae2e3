package controlplane

import (
	"os"
	"path/filepath"
)

// AuditPolicy is the file name of the apiservers' audit policy.
const AuditPolicy = "audit-policy.yaml"

// auditPolicy records the request pipeline for learners: every write with
// its request and response (who, what, the authorization decision, the
// admission annotations, the refusal), every read's metadata. Dropped:
// the RequestReceived stage (ResponseComplete has the same request), node
// heartbeats (one Lease update per node every few seconds, which would
// drown everything else on a big cluster), and the apiservers' health
// probes. Events are recorded at Metadata (every controller writes them).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  resources:
  - group: coordination.k8s.io
    resources: [leases]
  namespaces: [kube-node-lease]
- level: None
  nonResourceURLs: [/healthz*, /livez*, /readyz*, /version]
- level: Metadata
  resources:
  - group: ""
    resources: [events]
  - group: events.k8s.io
    resources: [events]
- level: Metadata
  resources:
  - group: ""
    resources: [secrets, configmaps, serviceaccounts/token]
  - group: authentication.k8s.io
    resources: [tokenreviews]
- level: RequestResponse
  verbs: [create, update, patch, delete, deletecollection]
- level: Metadata
`

// WriteAuditPolicy writes the audit policy into dir.
func WriteAuditPolicy(dir string) error {
	return os.WriteFile(filepath.Join(dir, AuditPolicy), []byte(auditPolicy), 0o644)
}

func auditFlags(s Site, name string) []string {
	if s.AuditLog == nil {
		return nil
	}
	return []string{
		"--audit-policy-file=" + s.Path(AuditPolicy),
		"--audit-log-path=" + s.AuditLog(name),
		"--audit-log-format=json",
		// One file per apiserver for the life of the lab: no rotation.
		"--audit-log-maxsize=0", "--audit-log-maxbackup=0",
	}
}
