package interpreter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRetain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		desired  string
		observed string
		want     string
	}{
		{
			name: "deployment keeps member replicas with retain-replicas label",
			desired: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, labels: {resourcetemplate.karmada.io/retain-replicas: "true"}}
spec: {replicas: 3}`,
			observed: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: 8}`,
			want: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, labels: {resourcetemplate.karmada.io/retain-replicas: "true"}}
spec: {replicas: 8}`,
		},
		{
			name: "deployment without label keeps desired replicas",
			desired: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, labels: {resourcetemplate.karmada.io/retain-replicas: "false"}}
spec: {replicas: 3}`,
			observed: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: 8}`,
			want: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, labels: {resourcetemplate.karmada.io/retain-replicas: "false"}}
spec: {replicas: 3}`,
		},
		{
			name: "pod keeps nodeName, serviceAccountName, volumes, volumeMounts by container name",
			desired: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - {name: a, image: new}
  - {name: b, image: new, volumeMounts: [{name: x, mountPath: /x}]}`,
			observed: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeName: n1
  serviceAccountName: default
  volumes: [{name: kube-api-access, projected: {sources: []}}]
  containers:
  - {name: b, image: old, volumeMounts: [{name: kube-api-access, mountPath: /var/run}]}
  - {name: a, image: old, volumeMounts: [{name: kube-api-access, mountPath: /a}]}`,
			want: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeName: n1
  serviceAccountName: default
  volumes: [{name: kube-api-access, projected: {sources: []}}]
  containers:
  - {name: a, image: new, volumeMounts: [{name: kube-api-access, mountPath: /a}]}
  - {name: b, image: new, volumeMounts: [{name: kube-api-access, mountPath: /var/run}]}`,
		},
		{
			name: "service keeps clusterIPs, nodePorts by port, healthCheckNodePort",
			desired: `apiVersion: v1
kind: Service
metadata: {name: s}
spec:
  type: LoadBalancer
  ports: [{port: 80, targetPort: 8080}, {port: 443}, {port: 9000}]`,
			observed: `apiVersion: v1
kind: Service
metadata: {name: s}
spec:
  type: LoadBalancer
  clusterIP: 10.0.0.1
  clusterIPs: [10.0.0.1]
  healthCheckNodePort: 32000
  ports: [{port: 443, nodePort: 30443}, {port: 80, nodePort: 30080}]`,
			want: `apiVersion: v1
kind: Service
metadata: {name: s}
spec:
  type: LoadBalancer
  clusterIP: 10.0.0.1
  clusterIPs: [10.0.0.1]
  healthCheckNodePort: 32000
  ports: [{port: 80, targetPort: 8080, nodePort: 30080}, {port: 443, nodePort: 30443}, {port: 9000}]`,
		},
		{
			name:     "serviceaccount merges member secrets",
			desired:  "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\nsecrets: [{name: a}]",
			observed: "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\nsecrets: [{name: sa-token-x}, {name: a}]",
			want:     "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\nsecrets: [{name: a}, {name: sa-token-x}]",
		},
		{
			name:     "serviceaccount without member secrets is unchanged",
			desired:  "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}",
			observed: "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}",
			want:     "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}",
		},
		{
			name:     "pvc keeps volumeName",
			desired:  "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {storageClassName: x}",
			observed: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {storageClassName: x, volumeName: pv-1}",
			want:     "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {storageClassName: x, volumeName: pv-1}",
		},
		{
			name:     "pv keeps claimRef",
			desired:  "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {capacity: {storage: 1Gi}}",
			observed: "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {capacity: {storage: 1Gi}, claimRef: {namespace: ns, name: c, uid: u}}",
			want:     "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {capacity: {storage: 1Gi}, claimRef: {namespace: ns, name: c, uid: u}}",
		},
		{
			name: "job keeps selector matchLabels and template labels",
			desired: `apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c, image: i}]}}`,
			observed: `apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: u1}}
  template: {metadata: {labels: {app: x, batch.kubernetes.io/controller-uid: u1, controller-uid: u1}}, spec: {containers: [{name: c, image: i}]}}`,
			want: `apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: u1}}
  template: {metadata: {labels: {app: x, batch.kubernetes.io/controller-uid: u1, controller-uid: u1}}, spec: {containers: [{name: c, image: i}]}}`,
		},
		{
			name:     "service-account-token secret keeps member data",
			desired:  "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: kubernetes.io/service-account-token",
			observed: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: kubernetes.io/service-account-token\ndata: {token: dA==}",
			want:     "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: kubernetes.io/service-account-token\ndata: {token: dA==}",
		},
		{
			name:     "opaque secret keeps desired data",
			desired:  "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: Opaque\ndata: {a: YQ==}",
			observed: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: Opaque\ndata: {a: Yg==}",
			want:     "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: Opaque\ndata: {a: YQ==}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			desired := obj(t, tc.desired)
			before := desired.DeepCopy()
			got, err := NewNative().Retain(desired, obj(t, tc.observed))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(obj(t, tc.want).Object, got.Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, desired); diff != "" {
				t.Errorf("desired modified:\n%s", diff)
			}
		})
	}
}
