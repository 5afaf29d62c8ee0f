package promote

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/policy"
)

// object reads a YAML object.
func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// A Deployment as a member's API server returns it.
const memberDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  uid: 0b8a5e4e-0000-4000-8000-000000000001
  resourceVersion: "4711"
  generation: 3
  creationTimestamp: "2024-01-01T00:00:00Z"
  labels: {app: web}
  annotations:
    deployment.kubernetes.io/revision: "2"
    team: blue
  managedFields: [{manager: kubectl, operation: Apply}]
  finalizers: [example.com/keep]
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: 0b8a5e4e-0000-4000-8000-000000000002}]
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      containers:
      - name: app
        image: nginx
        envFrom: [{configMapRef: {name: web-config}}]
        env: [{name: PASSWORD, valueFrom: {secretKeyRef: {name: web-secret, key: password}}}]
      volumes:
      - {name: data, persistentVolumeClaim: {claimName: web-data}}
status: {replicas: 2, readyReplicas: 2, observedGeneration: 3}
`

func TestTemplate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		member string
		want   string
	}{
		{
			name:   "deployment: server fields, status and the revision annotation pruned; overwrite added",
			member: memberDeployment,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web}
  annotations:
    team: blue
    work.karmada.io/conflict-resolution: overwrite
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      containers:
      - name: app
        image: nginx
        envFrom: [{configMapRef: {name: web-config}}]
        env: [{name: PASSWORD, valueFrom: {secretKeyRef: {name: web-secret, key: password}}}]
      volumes:
      - {name: data, persistentVolumeClaim: {claimName: web-data}}
`,
		},
		{
			name: "service: the member's cluster IP pruned",
			member: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop, uid: u, resourceVersion: "9"}
spec:
  clusterIP: 10.0.0.12
  clusterIPs: [10.0.0.12]
  ports: [{port: 80, protocol: TCP}]
status: {loadBalancer: {}}
`,
			want: `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
  annotations: {work.karmada.io/conflict-resolution: overwrite}
spec:
  ports: [{port: 80, protocol: TCP}]
`,
		},
		{
			name: "cluster role: cluster-scoped, no namespace",
			member: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "reader:pods", uid: u, resourceVersion: "1"}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`,
			want: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: "reader:pods"
  annotations: {work.karmada.io/conflict-resolution: overwrite}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`,
		},
		{
			name: "the object's own conflict resolution is kept, as karmadactl keeps it",
			member: `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: shop, annotations: {work.karmada.io/conflict-resolution: abort}}
data: {k: v}
`,
			want: `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: shop, annotations: {work.karmada.io/conflict-resolution: abort}}
data: {k: v}
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			member := object(t, tc.member)
			before := member.DeepCopy()
			got, err := Template(member)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(object(t, tc.want).Object, got.Object); diff != "" {
				t.Errorf("template (-want +got):\n%s", diff)
			}
			if !cmp.Equal(before.Object, member.Object) {
				t.Error("Template changed the member object it was given")
			}
		})
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	deploy := object(t, memberDeployment)
	cm := object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: web-config, namespace: shop, uid: u}, data: {k: v}}`)
	role := object(t, `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: reader}}`)
	for _, tc := range []struct {
		name      string
		obj       *unstructured.Unstructured
		deps      []*unstructured.Unstructured
		withDeps  bool
		wantItems []string // kind/name of each template, then "+policy" when it has one
		wantKind  string
		wantDeps  bool
	}{
		{name: "namespaced object", obj: deploy, wantItems: []string{"Deployment/web+policy"}, wantKind: "PropagationPolicy"},
		{name: "cluster-scoped object", obj: role, wantItems: []string{"ClusterRole/reader+policy"}, wantKind: "ClusterPropagationPolicy"},
		{name: "with dependencies: they come first, without policies; propagateDeps", obj: deploy, deps: []*unstructured.Unstructured{cm}, withDeps: true,
			wantItems: []string{"ConfigMap/web-config", "Deployment/web+policy"}, wantKind: "PropagationPolicy", wantDeps: true},
		{name: "-d without dependencies still sets propagateDeps", obj: role, withDeps: true,
			wantItems: []string{"ClusterRole/reader+policy"}, wantKind: "ClusterPropagationPolicy", wantDeps: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			items, err := Plan(tc.obj, tc.deps, "member1", tc.withDeps)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range items {
				s := it.Template.GetKind() + "/" + it.Template.GetName()
				if it.Policy != nil {
					s += "+policy"
				}
				if it.Template.GetResourceVersion() != "" || it.Template.GetUID() != "" {
					t.Errorf("%s: a template with the member's uid/resourceVersion", s)
				}
				got = append(got, s)
			}
			if !cmp.Equal(got, tc.wantItems) {
				t.Fatalf("items %v, want %v", got, tc.wantItems)
			}
			last := items[len(items)-1]
			var spec policyv1alpha1.PropagationSpec
			var name, ns, kind string
			switch p := last.Policy.(type) {
			case *policyv1alpha1.PropagationPolicy:
				spec, name, ns, kind = p.Spec, p.Name, p.Namespace, p.Kind
			case *policyv1alpha1.ClusterPropagationPolicy:
				spec, name, ns, kind = p.Spec, p.Name, p.Namespace, p.Kind
			}
			if kind != tc.wantKind || ns != tc.obj.GetNamespace() {
				t.Errorf("policy %s in %q, want %s in %q", kind, ns, tc.wantKind, tc.obj.GetNamespace())
			}
			if want := policy.Name(tc.obj.GetNamespace(), tc.obj.GetName(), tc.obj.GroupVersionKind()); name != want {
				t.Errorf("policy name %q, want karmadactl's %q", name, want)
			}
			if c := spec.Placement.ClusterAffinity; c == nil || !cmp.Equal(c.ClusterNames, []string{"member1"}) {
				t.Errorf("placement %+v, want member1 only", c)
			}
			if spec.PropagateDeps != tc.wantDeps {
				t.Errorf("propagateDeps %v, want %v", spec.PropagateDeps, tc.wantDeps)
			}
		})
	}
}
