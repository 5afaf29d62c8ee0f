package scheduler

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

// A FederatedResourceQuota's overall limit holds a binding back when the
// namespace's other bindings already use it; scaling down always passes.
func TestReconcileFederatedQuota(t *testing.T) {
	t.Parallel()
	other := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other", Generation: 1, ResourceVersion: "3"},
		Spec:       *pt.BindingSpec(2, s2Placement(), pt.At("a", 1), pt.At("b", 1)),
	}
	quota := &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: pt.RL("pods", "3")}}
	for name, tc := range map[string]struct {
		limit      string
		wantReason string
	}{
		"room for both":  {limit: "4", wantReason: workv1alpha2.BindingReasonSuccess},
		"over the limit": {limit: "3", wantReason: workv1alpha2.BindingReasonQuotaExceeded},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), newRB(), other)
			q := quota.DeepCopy()
			q.Spec.Overall = pt.RL("pods", tc.limit)
			if err := f.quotasI.Add(q); err != nil {
				t.Fatal(err)
			}
			if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
				t.Fatal(err)
			}
			f.onePatch(t, rbGVR, "default", "web")
			b := f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
			cond := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled)
			if cond == nil || cond.Reason != tc.wantReason {
				t.Fatalf("Scheduled condition %+v, want reason %s", cond, tc.wantReason)
			}
			if tc.wantReason == workv1alpha2.BindingReasonQuotaExceeded {
				if len(b.Spec.Clusters) != 0 || !strings.Contains(cond.Message, "exceeded FederatedResourceQuota team: pods: requested 2, used 2, limited 3") {
					t.Errorf("clusters %v, message %q", b.Spec.Clusters, cond.Message)
				}
			}
		})
	}
}
