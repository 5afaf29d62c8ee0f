package inprocess

import (
	"reflect"
	"slices"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/install"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// TestMergeFields: a merge patch applied field by field gives what the
// whole object encoded, patched and decoded gives (the server's way), and
// leaves the current object as it was; what it cannot patch by field it
// says so.
func TestMergeFields(t *testing.T) {
	t.Parallel()
	scheme := runtime.NewScheme()
	install.Install(scheme)
	s := &Storage{scheme: scheme, codecs: serializer.NewCodecFactory(scheme)}

	work := func() runtime.Object {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", ResourceVersion: "7",
			Labels: map[string]string{"a": "1", "b": "2"}, Finalizers: []string{"f"}}}
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`)}}}
		w.Status.Conditions = []metav1.Condition{{Type: "Applied", Status: metav1.ConditionFalse, Reason: "Failed", Message: "m", LastTransitionTime: metav1.Unix(1, 0)}}
		return w
	}
	binding := func() runtime.Object {
		b := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns", ResourceVersion: "3"}}
		b.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "d"}
		b.Spec.Replicas = 4
		b.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 2}, {Name: "m2", Replicas: 2}}
		b.Spec.Placement = &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1", "m2"}}}
		b.Status.SchedulerObservedGeneration = 1
		return b
	}
	for _, tc := range []struct {
		name    string
		current func() runtime.Object
		patch   string
		byField bool
	}{
		{"a Work's status", work, `{"status":{"conditions":[{"type":"Applied","status":"True","reason":"AppliedSuccessful","message":"ok","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, true},
		{"labels added and removed", work, `{"metadata":{"labels":{"a":null,"c":"3"}}}`, true},
		{"a resourceVersion precondition", work, `{"metadata":{"resourceVersion":"6"},"status":{"conditions":null}}`, true},
		{"a field removed", work, `{"status":null}`, true},
		{"the spec and status at once", binding, `{"spec":{"clusters":[{"name":"m3","replicas":4}],"placement":{"clusterAffinity":null}},"status":{"schedulerObservedGeneration":2}}`, true},
		{"a binding's status", binding, `{"status":{"aggregatedStatus":[{"clusterName":"m1","applied":true}],"conditions":[{"type":"Scheduled","status":"True","reason":"Success","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, true},
		{"a value that is not an object", binding, `{"spec":{"replicas":7}}`, true},
		{"an empty patch", binding, `{}`, true},
		{"an unknown field", binding, `{"spec":{"replicas":7},"extra":1}`, false},
		{"the kind", binding, `{"kind":"Other"}`, false},
		{"not an object", binding, `[1]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			current := tc.current()
			before := current.DeepCopyObject()
			got, ok, err := mergeFields(current, []byte(tc.patch))
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.byField {
				t.Fatalf("patched by field: %v, want %v", ok, tc.byField)
			}
			if !ok {
				return
			}
			s.scheme.Default(got)
			// The strategies change the result's metadata in place.
			m, err := meta.Accessor(got)
			if err != nil {
				t.Fatal(err)
			}
			finalizers := slices.Clone(m.GetFinalizers())
			for i := range m.GetFinalizers() {
				m.GetFinalizers()[i] = "changed-by-a-strategy"
			}
			if l := m.GetLabels(); l != nil {
				l["set-by-a-strategy"] = "x"
			}
			if !equality.Semantic.DeepEqual(current, before) {
				t.Errorf("the current object changed:\n%+v\nwas\n%+v", current, before)
			}
			gv := current.GetObjectKind().GroupVersionKind().GroupVersion()
			if gv.Empty() {
				kinds, _, _ := scheme.ObjectKinds(current)
				gv = kinds[0].GroupVersion()
			}
			codec := s.codecs.LegacyCodec(gv)
			raw, err := runtime.Encode(codec, before)
			if err != nil {
				t.Fatal(err)
			}
			patched, err := jsonpatch.MergePatch(raw, []byte(tc.patch))
			if err != nil {
				t.Fatal(err)
			}
			want := reflect.New(reflect.TypeOf(current).Elem()).Interface().(runtime.Object)
			if err := runtime.DecodeInto(codec, patched, want); err != nil {
				t.Fatal(err)
			}
			copy(m.GetFinalizers(), finalizers)
			delete(m.GetLabels(), "set-by-a-strategy")
			gotJSON, _ := runtime.Encode(codec, got)
			wantJSON, _ := runtime.Encode(codec, want)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("patched by field:\n%s\nthe whole object:\n%s", gotJSON, wantJSON)
			}
		})
	}
}
