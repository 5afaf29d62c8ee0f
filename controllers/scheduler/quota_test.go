package scheduler

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/placement"
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
		writes     []string
	}{
		"room for both": {limit: "4", wantReason: workv1alpha2.BindingReasonSuccess, writes: []string{workv1alpha2.SchedulingSubresource}},
		// The result is not written, only the Scheduled condition.
		"over the limit": {limit: "3", wantReason: workv1alpha2.BindingReasonQuotaExceeded, writes: []string{"status"}},
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
			f.writes(t, rbGVR, "default", "web", tc.writes...)
			b := f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
			cond := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled)
			if cond == nil || cond.Reason != tc.wantReason {
				t.Fatalf("Scheduled condition %+v, want reason %s", cond, tc.wantReason)
			}
			if tc.wantReason == workv1alpha2.BindingReasonQuotaExceeded {
				if len(b.Spec.Clusters) != 0 || !strings.Contains(cond.Message, "FederatedResourceQuota(default/team) exceeded for resource pods: requested sum 4, limit 3.") {
					t.Errorf("clusters %v, message %q", b.Spec.Clusters, cond.Message)
				}
			}
		})
	}
}

// A scheduling result flotilla-apiserver refuses for a quota (the cache
// checkQuotas read was behind) leaves spec.clusters as it was: nil for a
// new binding, the old replicas for a scale-up. The binding gets
// Scheduled=False QuotaExceeded with the refusal's message, and
// ScheduleBindingFailed goes to the binding and its template; a second
// refusal of the same result writes nothing again.
func TestReconcileQuotaRefusal(t *testing.T) {
	t.Parallel()
	const msg = `admission webhook "resourcebinding.karmada.io" denied the request: FederatedResourceQuota(default/team) exceeded for resource cpu: requested sum 40m, limit 30m.`
	scaleUp := newRB(scheduledRB, func(b *workv1alpha2.ResourceBinding) {
		b.Spec.Replicas = 4
		b.Generation = 4
	})
	for name, tc := range map[string]struct {
		rb           *workv1alpha2.ResourceBinding
		wantClusters []workv1alpha2.TargetCluster
	}{
		"new binding": {rb: newRB()},
		"scale-up":    {rb: scaleUp, wantClusters: []workv1alpha2.TargetCluster{pt.At("a", 1), pt.At("b", 1)}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), tc.rb)
			refused := 0
			f.client.PrependReactor("patch", "resourcebindings", func(a clienttesting.Action) (bool, runtime.Object, error) {
				var p map[string]any
				if err := json.Unmarshal(a.(clienttesting.PatchAction).GetPatch(), &p); err != nil {
					return true, nil, err
				}
				if _, writesSpec := p["spec"]; !writesSpec {
					return false, nil, nil
				}
				refused++
				return true, nil, placement.NewQuotaRefusal("web", msg)
			})
			if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
				t.Fatal(err)
			}
			// The refused result, then the condition through the status.
			f.writes(t, rbGVR, "default", "web", workv1alpha2.SchedulingSubresource, "status")
			b := f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
			if refused != 1 {
				t.Fatalf("%d refused writes, want 1", refused)
			}
			if !reflect.DeepEqual(b.Spec.Clusters, tc.wantClusters) {
				t.Errorf("clusters %v, want %v (unchanged)", b.Spec.Clusters, tc.wantClusters)
			}
			cond := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha2.BindingReasonQuotaExceeded || cond.Message != msg {
				t.Errorf("Scheduled condition %+v, want False QuotaExceeded %q", cond, msg)
			}
			want := []string{"Warning ScheduleBindingFailed " + msg, "Warning ScheduleBindingFailed " + msg}
			if got := f.events(); !reflect.DeepEqual(got, want) {
				t.Errorf("events %q, want %q (binding and template)", got, want)
			}
			if d := f.queue.Delayed(); len(d) != 1 || d[0].Delay != retryUnschedulable {
				t.Errorf("delayed %v, want one retry after %v", d, retryUnschedulable)
			}
			// The same refusal again: the condition already says so.
			if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
				t.Fatal(err)
			}
			if ps := f.patches(t); len(ps) != 1 || len(f.events()) != 0 {
				t.Errorf("second refusal: %d writes (want only the refused one) and events %v", len(ps), f.events())
			}
		})
	}
}
