package mutation

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

const testWorkID = "11111111-2222-3333-4444-555555555555"

func rawManifest(doc string) workv1alpha1.Manifest {
	return workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(doc)}}
}

func newWork(labels map[string]string, manifests ...workv1alpha1.Manifest) *workv1alpha1.Work {
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-687f7fb96f", Namespace: "karmada-es-member1", Labels: labels},
		Spec:       workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: manifests}},
	}
}

// assertManifest compares a manifest with want, byte for byte or as JSON.
func assertManifest(t *testing.T, got workv1alpha1.Manifest, want string) {
	t.Helper()
	if string(got.Raw) == want {
		return
	}
	var g, w map[string]any
	if err := json.Unmarshal(got.Raw, &g); err != nil {
		t.Fatalf("manifest is not JSON: %v: %s", err, got.Raw)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("manifest\ngot  %s\nwant %s", got.Raw, want)
	}
	if got.Object != nil {
		t.Errorf("manifest Object = %T, want nil", got.Object)
	}
}

func TestMutateWork(t *testing.T) {
	t.Parallel()
	withID := map[string]string{workv1alpha2.WorkPermanentIDLabel: testWorkID}
	tests := []struct {
		name   string
		work   *workv1alpha1.Work
		create bool
		want   []string // manifests, JSON
	}{
		{
			name:   "manifest is pruned, labelled and annotated",
			create: true,
			work: newWork(withID, rawManifest(`{"apiVersion":"apps/v1","kind":"Deployment",
				"metadata":{"name":"nginx","namespace":"default","uid":"u","resourceVersion":"3","labels":{"app":"nginx"},
				"annotations":{"b":"2","a":"1","deployment.kubernetes.io/revision":"1"}},"spec":{"replicas":2},"status":{"replicas":2}}`)),
			want: []string{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx","namespace":"default",
				"labels":{"app":"nginx","work.karmada.io/permanent-id":"` + testWorkID + `"},
				"annotations":{"a":"1","b":"2",
				"resourcetemplate.karmada.io/managed-annotations":"a,b,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
				"resourcetemplate.karmada.io/managed-labels":"app,work.karmada.io/permanent-id"}},"spec":{"replicas":2}}`},
		},
		{
			name:   "manifest without labels or annotations on update",
			create: false,
			work:   newWork(withID, rawManifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)),
			want: []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c",
				"labels":{"work.karmada.io/permanent-id":"` + testWorkID + `"},
				"annotations":{"resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
				"resourcetemplate.karmada.io/managed-labels":"work.karmada.io/permanent-id"}}}`},
		},
		{
			name:   "stale managed annotations are recomputed",
			create: false,
			work: newWork(withID, rawManifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c",
				"labels":{"work.karmada.io/permanent-id":"old"},
				"annotations":{"x":"1","resourcetemplate.karmada.io/managed-annotations":"gone","resourcetemplate.karmada.io/managed-labels":"gone"}}}`)),
			want: []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c",
				"labels":{"work.karmada.io/permanent-id":"` + testWorkID + `"},
				"annotations":{"x":"1","resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,x",
				"resourcetemplate.karmada.io/managed-labels":"work.karmada.io/permanent-id"}}}`},
		},
		{
			name:   "job ttl removed",
			create: true,
			work: newWork(withID, rawManifest(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},
				"spec":{"ttlSecondsAfterFinished":60,"manualSelector":true}}`)),
			want: []string{`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j",
				"labels":{"work.karmada.io/permanent-id":"` + testWorkID + `"},
				"annotations":{"resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
				"resourcetemplate.karmada.io/managed-labels":"work.karmada.io/permanent-id"}},"spec":{"manualSelector":true}}`},
		},
		{
			name:   "suppressed work: pruned only",
			create: true,
			work: newWork(map[string]string{workv1alpha2.WorkPermanentIDLabel: testWorkID, workv1alpha1.PropagationInstruction: workv1alpha1.PropagationInstructionSuppressed},
				rawManifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u"}}`)),
			want: []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`},
		},
		{
			name:   "object-only manifest is encoded",
			create: true,
			work: newWork(withID, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Object: &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "c"},
				Data:       map[string]string{"k": "v"},
			}}}),
			want: []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c",
				"labels":{"work.karmada.io/permanent-id":"` + testWorkID + `"},
				"annotations":{"resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
				"resourcetemplate.karmada.io/managed-labels":"work.karmada.io/permanent-id"}},"data":{"k":"v"}}`},
		},
		{
			name:   "unreadable manifests are left for validation",
			create: true,
			work: newWork(withID,
				rawManifest(`[1,2]`),
				rawManifest(`{"kind":"ConfigMap","metadata":{"name":"c","uid":"u"}}`),
				rawManifest(`not json`)),
			want: []string{`[1,2]`, `{"kind":"ConfigMap","metadata":{"name":"c","uid":"u"}}`, `not json`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := MutateWork(tc.work, tc.create); err != nil {
				t.Fatalf("MutateWork: %v", err)
			}
			if got := tc.work.Labels[workv1alpha2.WorkPermanentIDLabel]; got != testWorkID {
				t.Errorf("permanent id = %q, want %q kept", got, testWorkID)
			}
			for i, want := range tc.want {
				assertManifest(t, tc.work.Spec.Workload.Manifests[i], want)
			}

			// The webhook runs again on every update: a second pass changes nothing.
			again := tc.work.DeepCopy()
			if err := MutateWork(again, false); err != nil {
				t.Fatalf("second MutateWork: %v", err)
			}
			for i := range tc.want {
				if string(again.Spec.Workload.Manifests[i].Raw) != string(tc.work.Spec.Workload.Manifests[i].Raw) {
					t.Errorf("manifest %d changed on the second pass:\n%s\n%s", i, tc.work.Spec.Workload.Manifests[i].Raw, again.Spec.Workload.Manifests[i].Raw)
				}
			}
		})
	}
}

func TestMutateWorkGeneratesPermanentID(t *testing.T) {
	t.Parallel()
	for _, create := range []bool{true, false} {
		w := newWork(nil, rawManifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`))
		if err := MutateWork(w, create); err != nil {
			t.Fatal(err)
		}
		id := w.Labels[workv1alpha2.WorkPermanentIDLabel]
		if _, err := uuid.Parse(id); err != nil {
			t.Fatalf("create=%v: permanent id %q is not a UUID: %v", create, id, err)
		}
		var m map[string]any
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &m); err != nil {
			t.Fatal(err)
		}
		labels, _ := m["metadata"].(map[string]any)["labels"].(map[string]any)
		if labels[workv1alpha2.WorkPermanentIDLabel] != id {
			t.Errorf("create=%v: manifest permanent id = %v, want the Work's %q", create, labels[workv1alpha2.WorkPermanentIDLabel], id)
		}
	}
}

func TestMutateWorkReportsPruneErrors(t *testing.T) {
	t.Parallel()
	w := newWork(nil, rawManifest(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"manualSelector":"yes"}}`))
	err := MutateWork(w, true)
	if err == nil || !strings.Contains(err.Error(), "spec.workload.manifests[0]") {
		t.Errorf("err = %v, want an error naming spec.workload.manifests[0]", err)
	}
}

func TestMutateBindings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		labels    map[string]string
		create    bool
		wantID    string // "" means a new UUID; "-" means no label
		wantOther map[string]string
	}{
		{name: "create without id gets a UUID", create: true},
		{name: "create keeps an existing id", create: true, labels: map[string]string{"k": "v", "ID": "x"}, wantOther: map[string]string{"k": "v"}},
		{name: "update without id is left alone", create: false, wantID: "-"},
		{name: "create with empty id gets a UUID", create: true, labels: map[string]string{"ID": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			check := func(kind, key string, labels map[string]string) {
				t.Helper()
				id, ok := labels[key]
				switch {
				case tc.wantID == "-":
					if ok {
						t.Errorf("%s: label %s = %q, want none", kind, key, id)
					}
				case tc.labels["ID"] != "":
					if id != tc.labels["ID"] {
						t.Errorf("%s: label %s = %q, want %q kept", kind, key, id, tc.labels["ID"])
					}
				default:
					if _, err := uuid.Parse(id); err != nil {
						t.Errorf("%s: label %s = %q, not a UUID", kind, key, id)
					}
				}
				for k, v := range tc.wantOther {
					if labels[k] != v {
						t.Errorf("%s: label %s = %q, want %q", kind, k, labels[k], v)
					}
				}
			}
			withKey := func(key string) map[string]string {
				if tc.labels == nil {
					return nil
				}
				out := map[string]string{}
				for k, v := range tc.labels {
					if k == "ID" {
						k = key
					}
					out[k] = v
				}
				return out
			}

			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "n", Labels: withKey(workv1alpha2.ResourceBindingPermanentIDLabel)}}
			before := rb.DeepCopy()
			if err := MutateResourceBinding(rb, tc.create); err != nil {
				t.Fatal(err)
			}
			check("ResourceBinding", workv1alpha2.ResourceBindingPermanentIDLabel, rb.Labels)
			if tc.wantID == "-" && !apiequality.Semantic.DeepEqual(before, rb) {
				t.Errorf("update changed the binding:\n%s", diff.Diff(before, rb))
			}

			crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: withKey(workv1alpha2.ClusterResourceBindingPermanentIDLabel)}}
			if err := MutateClusterResourceBinding(crb, tc.create); err != nil {
				t.Fatal(err)
			}
			check("ClusterResourceBinding", workv1alpha2.ClusterResourceBindingPermanentIDLabel, crb.Labels)
		})
	}
}
