package execution

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

func TestStatusEqual(t *testing.T) {
	t.Parallel()
	now := metav1.Now()
	base := func() *workv1alpha1.WorkStatus {
		return &workv1alpha1.WorkStatus{
			Conditions: []metav1.Condition{{Type: "Applied", Status: "True", Reason: "AppliedSuccessful", LastTransitionTime: now}},
			ManifestStatuses: []workv1alpha1.ManifestStatus{{
				Identifier: workv1alpha1.ResourceIdentifier{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Name: "web"},
				Status:     &runtime.RawExtension{Raw: []byte(`{"replicas":2,"readyReplicas":2}`)},
				Health:     workv1alpha1.ResourceHealthy,
			}},
		}
	}
	tests := []struct {
		name   string
		change func(s *workv1alpha1.WorkStatus)
		want   bool
	}{
		{"same", func(*workv1alpha1.WorkStatus) {}, true},
		{"keys in another order", func(s *workv1alpha1.WorkStatus) {
			s.ManifestStatuses[0].Status.Raw = []byte(`{"readyReplicas": 2, "replicas": 2}`)
		}, true},
		{"other status", func(s *workv1alpha1.WorkStatus) { s.ManifestStatuses[0].Status.Raw = []byte(`{"replicas":3}`) }, false},
		{"other health", func(s *workv1alpha1.WorkStatus) { s.ManifestStatuses[0].Health = workv1alpha1.ResourceUnhealthy }, false},
		{"other message", func(s *workv1alpha1.WorkStatus) { s.Conditions[0].Message = "x" }, false},
		{"no manifest status", func(s *workv1alpha1.WorkStatus) { s.ManifestStatuses = nil }, false},
		{"status removed", func(s *workv1alpha1.WorkStatus) {
			s.ManifestStatuses[0].Status = nil
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := base()
			tc.change(s)
			if got := statusEqual(base(), s); got != tc.want {
				t.Errorf("statusEqual = %v, want %v", got, tc.want)
			}
		})
	}
	if !rawEqual(nil, &runtime.RawExtension{}) {
		t.Error("nil and empty raw differ")
	}
}

func TestStatusPatchRemovesEmptyLists(t *testing.T) {
	t.Parallel()
	patch, err := statusPatch(&workv1alpha1.WorkStatus{Conditions: []metav1.Condition{{Type: "Applied"}}})
	if err != nil {
		t.Fatal(err)
	}
	obj := &struct {
		Status map[string]any `json:"status"`
	}{}
	if err := jsonUnmarshal(patch, obj); err != nil {
		t.Fatal(err)
	}
	if v, ok := obj.Status["manifestStatuses"]; !ok || v != nil {
		t.Errorf("manifestStatuses not nulled: %s", patch)
	}
	if diff := cmp.Diff(1, len(obj.Status["conditions"].([]any))); diff != "" {
		t.Errorf("conditions: %s", patch)
	}
}

func TestStatusReconciler(t *testing.T) {
	t.Parallel()
	applied := metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, Reason: workv1alpha1.WorkAppliedSuccessfulReason}
	dispatching := metav1.Condition{Type: workv1alpha1.WorkDispatching, Status: metav1.ConditionTrue, Reason: workv1alpha1.WorkDispatchingReason,
		Message: workv1alpha1.WorkDispatchingMessage}
	id := workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "default", Name: "cm"}
	ms := func(status string) []workv1alpha1.ManifestStatus {
		return []workv1alpha1.ManifestStatus{{Identifier: id, Status: &runtime.RawExtension{Raw: []byte(status)}, Health: workv1alpha1.ResourceUnknown}}
	}
	tests := []struct {
		name           string
		stored, status workv1alpha1.WorkStatus
		dispatching    bool
		patchErr       error
		wantPatches    []string
		wantEvents     []string
		wantRecorded   bool
		wantErr        bool
	}{
		{name: "unchanged: no patch, no event", dispatching: true,
			stored: workv1alpha1.WorkStatus{Conditions: []metav1.Condition{applied}, ManifestStatuses: ms(`{"a":1,"b":2}`)},
			status: workv1alpha1.WorkStatus{Conditions: []metav1.Condition{applied}, ManifestStatuses: ms(`{"b":2,"a":1}`)}},
		{name: "changed: one patch of the status, the events of what changed, Dispatching unchanged says nothing",
			stored:       workv1alpha1.WorkStatus{Conditions: []metav1.Condition{applied, dispatching}},
			status:       workv1alpha1.WorkStatus{Conditions: []metav1.Condition{applied, dispatching}, ManifestStatuses: ms(`{"a":1}`)},
			wantPatches:  []string{`merge/status {"status":{"conditions":[{"type":"Applied","status":"True","lastTransitionTime":null,"reason":"AppliedSuccessful","message":""},{"type":"Dispatching","status":"True","lastTransitionTime":null,"reason":"Dispatching","message":"Work is being dispatched to member clusters."}],"manifestStatuses":[{"identifier":{"ordinal":0,"version":"v1","kind":"ConfigMap","resource":"configmaps","namespace":"default","name":"cm"},"status":{"a":1},"health":"Unknown"}]}}`},
			wantEvents:   []string{"Work/cm Normal ReflectStatusSucceed Reflect status for object(ConfigMap/default/cm) succeed."},
			wantRecorded: true},
		{name: "dispatching: a WorkDispatching event after the write", dispatching: true,
			status:       workv1alpha1.WorkStatus{Conditions: []metav1.Condition{dispatching}},
			wantPatches:  []string{`merge/status {"status":{"conditions":[{"type":"Dispatching","status":"True","lastTransitionTime":null,"reason":"Dispatching","message":"Work is being dispatched to member clusters."}],"manifestStatuses":null}}`},
			wantEvents:   []string{"Work/cm Normal WorkDispatching Work is being dispatched to member clusters."},
			wantRecorded: true},
		{name: "the patch fails: its error, no event, nothing recorded", dispatching: true, patchErr: errors.New("etcd down"), wantErr: true,
			status:      workv1alpha1.WorkStatus{Conditions: []metav1.Condition{dispatching}},
			wantPatches: []string{`merge/status {"status":{"conditions":[{"type":"Dispatching","status":"True","lastTransitionTime":null,"reason":"Dispatching","message":"Work is being dispatched to member clusters."}],"manifestStatuses":null}}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			works, events := &fakeWorks{err: tc.patchErr}, &fakeEvents{}
			r := statusReconciler{patch: works.patch, event: events.event}
			recs := newRecords()
			work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: testNS, UID: "w", ResourceVersion: "7"}, Status: tc.stored}
			err := r.reconcile(context.Background(), recs, work, &tc.stored, &tc.status, tc.dispatching)
			if (err != nil) != tc.wantErr {
				t.Errorf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantPatches, works.patches); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, events.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			// The write is remembered: the Work as cached (still at "7")
			// reads as the status written.
			fresh := recs.freshStatus(work)
			if recorded := fresh != &work.Status; recorded != tc.wantRecorded {
				t.Errorf("write recorded %v, want %v", recorded, tc.wantRecorded)
			} else if recorded && !statusEqual(fresh, &tc.status) {
				t.Errorf("recorded status %+v, want %+v", fresh, tc.status)
			}
			if !tc.wantRecorded {
				return
			}
			// The status patch sends no resourceVersion: it landed over
			// version 8, another writer's (the binding controller's spec
			// patch), which the cache then shows before the write (9).
			// Deciding on 8's status would drop what the write recorded.
			between := work.DeepCopy()
			between.ResourceVersion = "8"
			if fresh := recs.freshStatus(between); fresh == &between.Status || !statusEqual(fresh, &tc.status) {
				t.Errorf("cache at the version the write landed over: status %+v, want the status written", fresh)
			}
			shown := work.DeepCopy()
			shown.ResourceVersion = "9"
			if fresh := recs.freshStatus(shown); fresh != &shown.Status {
				t.Error("cache showing the write: still the record, want the cached status")
			}
		})
	}
}
