package interpreter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPruneIrrelevantFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{
			name: "metadata and status",
			in: `apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: ns, uid: u, resourceVersion: "1", generation: 2, creationTimestamp: "2026-01-01T00:00:00Z",
  finalizers: [f], ownerReferences: [{apiVersion: v1, kind: X, name: x, uid: y}], managedFields: [{manager: m}], labels: {a: b}}
data: {k: v}
status: {x: y}`,
			want: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns, labels: {a: b}}\ndata: {k: v}",
		},
		{
			name: "deployment revision annotations",
			in:   "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, annotations: {deployment.kubernetes.io/revision: \"3\", deployment.kubernetes.io/revision-history: \"1,2\", keep: x}}",
			want: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, annotations: {keep: x}}",
		},
		{
			name: "job generated selector and ttl",
			in: `apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  ttlSecondsAfterFinished: 10
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: u, controller-uid: u}}
  template: {metadata: {labels: {app: a, controller-uid: u, batch.kubernetes.io/controller-uid: u, job-name: j, batch.kubernetes.io/job-name: j}}}`,
			want: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template: {metadata: {labels: {app: a}}}",
		},
		{
			name: "job manual selector kept",
			in:   "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {manualSelector: true, selector: {matchLabels: {controller-uid: u}}}",
			want: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {manualSelector: true, selector: {matchLabels: {controller-uid: u}}}",
		},
		{
			name: "serviceaccount token secrets",
			in:   "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\nsecrets: [{name: sa-token-abc}, {name: other}]",
			want: "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\nsecrets: [{name: other}]",
		},
		{
			name: "service cluster IPs",
			in:   "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {clusterIP: 10.0.0.1, clusterIPs: [10.0.0.1], ports: [{port: 80}]}",
			want: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}",
		},
		{
			name: "headless service keeps None",
			in:   "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {clusterIP: None, clusterIPs: [None]}",
			want: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {clusterIP: None, clusterIPs: [None]}",
		},
		{
			name: "sa token secret",
			in:   "apiVersion: v1\nkind: Secret\nmetadata: {name: s, annotations: {kubernetes.io/service-account.name: sa, kubernetes.io/service-account.uid: u}}\ntype: kubernetes.io/service-account-token\ndata: {token: dA==}",
			want: "apiVersion: v1\nkind: Secret\nmetadata: {name: s, annotations: {kubernetes.io/service-account.name: sa}}\ntype: kubernetes.io/service-account-token",
		},
		{
			name: "pvc selected node",
			in:   "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c, annotations: {volume.kubernetes.io/selected-node: n1, a: b}}",
			want: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c, annotations: {a: b}}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := obj(t, tc.in)
			before := in.DeepCopy()
			got := PruneIrrelevantFields(in)
			if diff := cmp.Diff(obj(t, tc.want).Object, got.Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("input modified:\n%s", diff)
			}
		})
	}
}
