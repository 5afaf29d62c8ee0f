package execution

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

func TestSetApplied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		outcomes   []outcome
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{"all applied", []outcome{{}, {}}, metav1.ConditionTrue, "AppliedSuccessful", "Manifest has been successfully applied"},
		{"one failed", []outcome{{}, {err: errors.New(`Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1`)}},
			metav1.ConditionFalse, "AppliedFailed",
			`Failed to apply all manifests (1/2): Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1`},
		{"no manifest", nil, metav1.ConditionTrue, "AppliedSuccessful", "Manifest has been successfully applied"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var status workv1alpha1.WorkStatus
			err := setApplied(&status, tc.outcomes)
			if (err != nil) != (tc.wantStatus == metav1.ConditionFalse) {
				t.Errorf("err %v", err)
			}
			c := meta.FindStatusCondition(status.Conditions, workv1alpha1.WorkApplied)
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.Message != tc.wantMsg {
				t.Errorf("condition %+v", c)
			}
		})
	}
}

func TestSetDispatching(t *testing.T) {
	t.Parallel()
	var status workv1alpha1.WorkStatus
	if !setDispatching(&status, false) {
		t.Error("first condition not reported as a change")
	}
	if setDispatching(&status, false) {
		t.Error("unchanged condition reported as a change")
	}
	if !setDispatching(&status, true) {
		t.Error("suspension not reported as a change")
	}
	c := meta.FindStatusCondition(status.Conditions, workv1alpha1.WorkDispatching)
	if c.Status != metav1.ConditionFalse || c.Reason != "SuspendDispatching" || c.Message != "Work dispatching is in a suspended state." {
		t.Errorf("condition %+v", c)
	}
}

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
