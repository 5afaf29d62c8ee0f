package execution

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRetainMemberFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		desired          string
		observed         string
		wantLabels       map[string]string
		wantAnnotations  map[string]string
		wantFinalizers   []string
		wantOwners       int
		wantResourceVers string
	}{
		{
			name: "member-owned metadata is kept",
			desired: `
metadata:
  name: a
  labels: {app: web, karmada.io/managed: "true"}
  annotations:
    resourcetemplate.karmada.io/managed-annotations: resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels
    resourcetemplate.karmada.io/managed-labels: app,karmada.io/managed`,
			observed: `
metadata:
  name: a
  resourceVersion: "42"
  finalizers: [member.io/guard]
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: "1"}]
  labels: {app: web, karmada.io/managed: "true", member-only: "yes"}
  annotations:
    deployment.kubernetes.io/revision: "3"
    resourcetemplate.karmada.io/managed-annotations: resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels
    resourcetemplate.karmada.io/managed-labels: app,karmada.io/managed`,
			wantLabels: map[string]string{"app": "web", "karmada.io/managed": "true", "member-only": "yes"},
			wantAnnotations: map[string]string{
				"deployment.kubernetes.io/revision":               "3",
				"resourcetemplate.karmada.io/managed-annotations": "resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
				"resourcetemplate.karmada.io/managed-labels":      "app,karmada.io/managed",
			},
			wantFinalizers:   []string{"member.io/guard"},
			wantOwners:       1,
			wantResourceVers: "42",
		},
		{
			name: "a key removed from the template is removed from the member",
			desired: `
metadata:
  name: a
  labels: {app: web}
  annotations: {resourcetemplate.karmada.io/managed-labels: app}`,
			observed: `
metadata:
  name: a
  resourceVersion: "7"
  labels: {app: web, tier: front, member-only: "yes"}
  annotations: {resourcetemplate.karmada.io/managed-labels: "app,tier", note: kept}`,
			wantLabels:       map[string]string{"app": "web", "member-only": "yes"},
			wantAnnotations:  map[string]string{"resourcetemplate.karmada.io/managed-labels": "app", "note": "kept"},
			wantResourceVers: "7",
		},
		{
			name:             "the manifest wins a key both have",
			desired:          `{metadata: {name: a, labels: {app: new}}}`,
			observed:         `{metadata: {name: a, resourceVersion: "1", labels: {app: old}}}`,
			wantLabels:       map[string]string{"app": "new"},
			wantResourceVers: "1",
		},
		{
			name:             "nothing to keep leaves no empty maps",
			desired:          `{metadata: {name: a}}`,
			observed:         `{metadata: {name: a, resourceVersion: "1"}}`,
			wantResourceVers: "1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			desired, observed := obj(t, tc.desired), obj(t, tc.observed)
			retainMemberFields(desired, observed)
			if diff := cmp.Diff(tc.wantLabels, desired.GetLabels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAnnotations, desired.GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFinalizers, desired.GetFinalizers()); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
			if got := len(desired.GetOwnerReferences()); got != tc.wantOwners {
				t.Errorf("%d owner references, want %d", got, tc.wantOwners)
			}
			if got := desired.GetResourceVersion(); got != tc.wantResourceVers {
				t.Errorf("resourceVersion %q, want %q", got, tc.wantResourceVers)
			}
			if _, found := desired.Object["metadata"].(map[string]any)["labels"]; found && tc.wantLabels == nil {
				t.Error("an empty labels map was left")
			}
		})
	}
}

func TestCheckConflict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		desired    string
		observed   string
		wantRefuse bool
	}{
		{"managed object is updated", `{kind: ConfigMap, metadata: {name: a, namespace: ns}}`,
			`{metadata: {name: a, labels: {karmada.io/managed: "true"}}}`, false},
		{"unmanaged object is refused by default", `{kind: ConfigMap, metadata: {name: a, namespace: ns}}`,
			`{metadata: {name: a}}`, true},
		{"unmanaged object is refused with abort", `{kind: ConfigMap, metadata: {name: a, namespace: ns, annotations: {work.karmada.io/conflict-resolution: abort}}}`,
			`{metadata: {name: a}}`, true},
		{"managed label with another value is not ours", `{kind: ConfigMap, metadata: {name: a, namespace: ns}}`,
			`{metadata: {name: a, labels: {karmada.io/managed: "false"}}}`, true},
		{"unmanaged object is taken over with overwrite", `{kind: ConfigMap, metadata: {name: a, namespace: ns, annotations: {work.karmada.io/conflict-resolution: overwrite}}}`,
			`{metadata: {name: a}}`, false},
		{"other values are ignored", `{kind: ConfigMap, metadata: {name: a, namespace: ns, annotations: {work.karmada.io/conflict-resolution: Overwrite}}}`,
			`{metadata: {name: a}}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkConflict(obj(t, tc.desired), obj(t, tc.observed), "member1")
			if (err != nil) != tc.wantRefuse {
				t.Fatalf("err %v, want refusal %v", err, tc.wantRefuse)
			}
			if err != nil && err.Error() != "resource(kind=ConfigMap, ns/a) already exists in the cluster member1 and the work.karmada.io/conflict-resolution strategy value is empty, Karmada will not manage this resource" {
				t.Errorf("message %q", err)
			}
		})
	}
}

func TestRetainKeysIgnoresBlanksInManagedList(t *testing.T) {
	t.Parallel()
	got := retainKeys(nil, map[string]string{"a": "1", "b": "2"}, " a , ,")
	if diff := cmp.Diff(map[string]string{"b": "2"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestHoldsButOwnMetadata(t *testing.T) {
	t.Parallel()
	// want is a manifest after retainMemberFields: the template's own
	// metadata, Flotilla's, and the member's.
	const want = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  resourceVersion: "7"
  labels:
    app: web
    karmada.io/managed: "true"
    work.karmada.io/permanent-id: w-1
    resourcebinding.karmada.io/permanent-id: b-1
    propagationpolicy.karmada.io/permanent-id: p-1
  annotations:
    team: blue
    work.karmada.io/conflict-resolution: overwrite
    work.karmada.io/name: web-deployment
    work.karmada.io/namespace: karmada-es-member1
    work.flotilla.io/adopted: "true"
    resourcebinding.karmada.io/name: web-deployment
    resourcebinding.karmada.io/namespace: shop
    resourcetemplate.karmada.io/uid: t-1
    resourcetemplate.karmada.io/generation: "1"
    resourcetemplate.karmada.io/managed-annotations: team,work.karmada.io/conflict-resolution
    resourcetemplate.karmada.io/managed-labels: app,karmada.io/managed
    propagationpolicy.karmada.io/name: web-x
    propagationpolicy.karmada.io/namespace: shop
spec:
  replicas: 2
  template: {spec: {containers: [{name: app, image: nginx}]}}
`
	const member = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  resourceVersion: "7"
  uid: u-1
  generation: 4
  labels: {app: web}
  annotations: {team: blue, deployment.kubernetes.io/revision: "4"}
spec:
  replicas: 2
  progressDeadlineSeconds: 600
  template: {spec: {containers: [{name: app, image: nginx, imagePullPolicy: Always}]}}
status: {replicas: 2}
`
	for _, tc := range []struct {
		name     string
		observed func(u map[string]any)
		want     bool
	}{
		{name: "only Flotilla's metadata missing: holds it", want: true},
		{name: "a spec field differs", observed: func(u map[string]any) {
			u["spec"].(map[string]any)["replicas"] = int64(3)
		}},
		{name: "a template label missing", observed: func(u map[string]any) {
			delete(u["metadata"].(map[string]any)["labels"].(map[string]any), "app")
		}},
		{name: "a template annotation with another value", observed: func(u map[string]any) {
			u["metadata"].(map[string]any)["annotations"].(map[string]any)["team"] = "red"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			observed := obj(t, member)
			if tc.observed != nil {
				tc.observed(observed.Object)
			}
			w := obj(t, want)
			before := w.DeepCopy()
			if got := holdsButOwnMetadata(w, observed); got != tc.want {
				t.Errorf("holdsButOwnMetadata = %v, want %v", got, tc.want)
			}
			if !cmp.Equal(before.Object, w.Object) {
				t.Error("want was changed")
			}
		})
	}
}
