package interpreter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGetDependencies(t *testing.T) {
	t.Parallel()
	podSpec := `
      serviceAccountName: app
      imagePullSecrets: [{name: pull}]
      volumes:
      - {name: a, configMap: {name: cm-vol}}
      - {name: b, secret: {secretName: sec-vol}}
      - {name: c, persistentVolumeClaim: {claimName: data}}
      - name: d
        projected:
          sources: [{configMap: {name: cm-proj}}, {secret: {name: sec-proj}}, {serviceAccountToken: {path: t}}]
      - {name: e, csi: {driver: x, nodePublishSecretRef: {name: sec-csi}}}
      initContainers:
      - name: init
        image: i
        envFrom: [{configMapRef: {name: cm-init}}]
      containers:
      - name: c
        image: i
        env:
        - {name: A, valueFrom: {configMapKeyRef: {name: cm-env, key: k}}}
        - {name: B, valueFrom: {secretKeyRef: {name: sec-env, key: k}}}
        - {name: C, value: plain}
        envFrom: [{secretRef: {name: sec-envfrom}}, {configMapRef: {name: cm-vol}}]`
	v1 := func(kind, name string) DependentObjectReference {
		return DependentObjectReference{APIVersion: "v1", Kind: kind, Namespace: "ns", Name: name}
	}
	fullDeps := []DependentObjectReference{
		v1("ConfigMap", "cm-env"), v1("ConfigMap", "cm-init"), v1("ConfigMap", "cm-proj"), v1("ConfigMap", "cm-vol"),
		v1("Secret", "pull"), v1("Secret", "sec-csi"), v1("Secret", "sec-env"), v1("Secret", "sec-envfrom"), v1("Secret", "sec-proj"), v1("Secret", "sec-vol"),
		v1("ServiceAccount", "app"),
		v1("PersistentVolumeClaim", "data"),
	}
	tests := []struct {
		name    string
		obj     string
		want    []DependentObjectReference
		wantErr bool
	}{
		{
			name: "deployment pod template",
			obj:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\nspec:\n  template:\n    spec:" + podSpec,
			want: fullDeps,
		},
		{
			name: "daemonset pod template",
			obj:  "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d, namespace: ns}\nspec:\n  template:\n    spec:" + podSpec,
			want: fullDeps,
		},
		{
			name: "cronjob job template",
			obj:  "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c, namespace: ns}\nspec:\n  jobTemplate:\n   spec:\n    template:\n     spec:" + indent(podSpec),
			want: fullDeps,
		},
		{
			name: "default service account is not a dependency",
			obj:  "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {serviceAccountName: default, containers: [{name: c, image: i}]}",
		},
		{
			name: "every volume source naming a secret, and ephemeral containers",
			obj: `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  volumes:
  - {name: a, azureFile: {secretName: s-azure, shareName: x}}
  - {name: b, cephfs: {monitors: [m], secretRef: {name: s-ceph}}}
  - {name: c, cinder: {volumeID: v, secretRef: {name: s-cinder}}}
  - {name: d, flexVolume: {driver: x, secretRef: {name: s-flex}}}
  - {name: e, rbd: {monitors: [m], image: i, secretRef: {name: s-rbd}}}
  - {name: f, scaleIO: {gateway: g, system: s, secretRef: {name: s-scaleio}}}
  - {name: g, iscsi: {targetPortal: t, iqn: q, lun: 0, secretRef: {name: s-iscsi}}}
  - {name: h, storageos: {volumeName: v, secretRef: {name: s-storageos}}}
  - {name: i, emptyDir: {}}
  containers: [{name: c, image: i}]
  ephemeralContainers:
  - {name: debug, image: i, env: [{name: X, valueFrom: {secretKeyRef: {name: s-debug, key: k}}}, {name: Y, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]}`,
			want: []DependentObjectReference{
				v1("Secret", "s-azure"), v1("Secret", "s-ceph"), v1("Secret", "s-cinder"), v1("Secret", "s-debug"), v1("Secret", "s-flex"),
				v1("Secret", "s-iscsi"), v1("Secret", "s-rbd"), v1("Secret", "s-scaleio"), v1("Secret", "s-storageos"),
			},
		},
		{
			name:    "a field of the wrong type is an error",
			obj:     "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\nspec: {template: {spec: {volumes: [{name: v, secret: {secretName: 7}}]}}}",
			wantErr: true,
		},
		{
			name:    "volumes not a list is an error",
			obj:     "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\nspec: {template: {spec: {volumes: {a: b}}}}",
			wantErr: true,
		},
		{
			name: "statefulset drops claims of volumeClaimTemplates",
			obj: `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s, namespace: ns}
spec:
  volumeClaimTemplates: [{metadata: {name: www}}]
  template:
    spec:
      volumes: [{name: www, persistentVolumeClaim: {claimName: www}}, {name: shared, persistentVolumeClaim: {claimName: shared}}]
      containers: [{name: c, image: i}]`,
			want: []DependentObjectReference{v1("PersistentVolumeClaim", "shared")},
		},
		{
			name: "ingress tls secrets",
			obj:  "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i, namespace: ns}\nspec: {tls: [{secretName: b}, {hosts: [h]}, {secretName: a}, {secretName: b}]}",
			want: []DependentObjectReference{v1("Secret", "a"), v1("Secret", "b")},
		},
		{
			name: "serviceimport derived service and endpointslices",
			obj:  "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {name: web, namespace: ns}",
			want: []DependentObjectReference{
				v1("Service", "derived-web"),
				{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Namespace: "ns",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/service-name": "derived-web"}}},
			},
		},
		{
			name:    "configmap has no hook",
			obj:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}",
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := NewNative().GetDependencies(obj(t, tc.obj))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// indent shifts every line of the pod spec snippet by one space.
func indent(s string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		out = append(out, s[i])
		if s[i] == '\n' {
			out = append(out, ' ')
		}
	}
	return string(out)
}
