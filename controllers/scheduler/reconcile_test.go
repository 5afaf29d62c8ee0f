package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	pt "github.com/flotilla-io/flotilla/placement/placementtest"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

const succeeded = "Normal ScheduleBindingSucceed Binding has been scheduled successfully. Result: {a:1, b:1}"

// The one write of s2Placement's decision at generation 3: the result and the
// status observing the generation it was made for (the scheduling
// subresource moves both to 4, as the result changes the spec).
var successPatch = `{
  "metadata": {"resourceVersion": "7", "annotations": {"policy.karmada.io/applied-placement": ` + quote(s2PlacementJSON) + `}},
  "spec": {"clusters": [{"name": "a", "replicas": 1}, {"name": "b", "replicas": 1}]},
  "status": {
    "schedulerObservedGeneration": 3,
    "lastScheduledTime": "` + fixedNowJSON + `",
    "schedulerObservingAffinityName": null,
    "conditions": [{"type": "Scheduled", "status": "True", "observedGeneration": 3, "lastTransitionTime": "` + fixedNowJSON + `",
      "reason": "Success", "message": "Binding has been scheduled successfully."}]
  }
}`

func TestReconcileWritesDecision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		binding runtime.Object
		key     string
		gvr     schema.GroupVersionResource
		ns      string
	}{
		{name: "ResourceBinding", binding: newRB(), key: "rb/default/web", gvr: rbGVR, ns: "default"},
		{name: "ClusterResourceBinding", binding: newCRB(), key: "crb/web", gvr: crbGVR},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), tc.binding)
			if err := f.ctrl.reconcile(context.Background(), tc.key); err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, successPatch, f.writes(t, tc.gvr, tc.ns, "web", workv1alpha2.SchedulingSubresource)[0])
			if diff := cmp.Diff([]string{succeeded, succeeded}, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if d := f.queue.Delayed(); len(d) != 0 {
				t.Errorf("success queued retries %v", d)
			}

			// The informer delivers the written binding: nothing more to do.
			obj := f.resync(t, tc.gvr, tc.ns, "web")
			if got := bindingOf(obj).spec.Clusters; !cmp.Equal(got, []workv1alpha2.TargetCluster{pt.At("a", 1), pt.At("b", 1)}) {
				t.Errorf("stored spec.clusters = %v", got)
			}
			if err := f.ctrl.reconcile(context.Background(), tc.key); err != nil {
				t.Fatal(err)
			}
			if n := len(f.client.Actions()); n != 0 {
				t.Errorf("second reconcile made %d requests, want none", n)
			}
			if ev := f.events(); len(ev) != 0 {
				t.Errorf("second reconcile recorded %v", ev)
			}
		})
	}
}

func TestReconcileUpToDate(t *testing.T) {
	t.Parallel()
	// writes are the subresources written, in order: "" the binding
	// (the result), "status" its status.
	tests := []struct {
		name   string
		mod    func(*workv1alpha2.ResourceBinding)
		writes []string
		// quiet: written without a scheduling run, so without events.
		quiet bool
	}{
		{name: "stored binding holds the decision", mod: func(*workv1alpha2.ResourceBinding) {}},
		{name: "other conditions do not matter", mod: func(b *workv1alpha2.ResourceBinding) {
			b.Status.Conditions = append(b.Status.Conditions, metav1.Condition{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionFalse, Reason: "x"})
		}},
		// Karmada's "Don't need to schedule": the observed generation alone,
		// no run, no event (TestReconcileSteady).
		{name: "new generation", writes: []string{"status"}, quiet: true, mod: func(b *workv1alpha2.ResourceBinding) { b.Generation = 4 }},
		{name: "placement not applied", writes: []string{workv1alpha2.SchedulingSubresource}, mod: func(b *workv1alpha2.ResourceBinding) { b.Annotations = nil }},
		{name: "other clusters", writes: []string{workv1alpha2.SchedulingSubresource}, mod: func(b *workv1alpha2.ResourceBinding) { b.Spec.Clusters[1].Replicas = 2 }},
		{name: "stale affinity name", writes: []string{"status"}, mod: func(b *workv1alpha2.ResourceBinding) { b.Status.SchedulerObservedAffinityName = "old" }},
		{name: "no Scheduled condition", writes: []string{"status"}, mod: func(b *workv1alpha2.ResourceBinding) { b.Status.Conditions = nil }},
		{name: "Scheduled condition failed", writes: []string{"status"}, mod: func(b *workv1alpha2.ResourceBinding) {
			b.Status.Conditions[0].Status, b.Status.Conditions[0].Reason = metav1.ConditionFalse, workv1alpha2.BindingReasonUnschedulable
		}},
		{name: "Scheduled condition message", writes: []string{"status"}, mod: func(b *workv1alpha2.ResourceBinding) { b.Status.Conditions[0].Message = "old" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), newRB(scheduledRB, tc.mod))
			if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
				t.Fatal(err)
			}
			f.writes(t, rbGVR, "default", "web", tc.writes...)
			if got, want := len(f.events()), map[bool]int{false: 0, true: 2}[len(tc.writes) > 0 && !tc.quiet]; got != want {
				t.Errorf("got %d events, want %d", got, want)
			}
		})
	}
}

func TestReconcileFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		placement *policyv1alpha1.Placement
		replicas  int32
		reason    string
		message   string
	}{
		// No cluster fitting is a result (TestReconcileNoClusterFitClearsClusters).
		// a and b have 10 free pods each; the 2 a holds are no room for
		// the 28 added.
		{name: "unschedulable", placement: &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()}, replicas: 30,
			reason: workv1alpha2.BindingReasonUnschedulable, message: "Clusters available replicas 20 are not enough to schedule."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), newRB(scheduledRB, func(b *workv1alpha2.ResourceBinding) {
				b.Generation = 4
				b.Spec.Replicas = tc.replicas
				b.Spec.Placement = tc.placement
				b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 2)}
			}))
			if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
				t.Fatal(err)
			}
			// spec.clusters, the applied placement, lastScheduledTime and the
			// observed generation are left alone; the condition's status
			// changes, so its time too.
			jsonEqual(t, fmt.Sprintf(`{
			  "metadata": {"resourceVersion": "7"},
			  "status": {"conditions": [{"type": "Scheduled", "status": "False", "observedGeneration": 4,
			    "lastTransitionTime": %q, "reason": %q, "message": %q}]}
			}`, fixedNowJSON, tc.reason, tc.message), f.writes(t, rbGVR, "default", "web", "status")[0])
			failed := "Warning ScheduleBindingFailed " + tc.message
			if diff := cmp.Diff([]string{failed, failed}, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			retry := []delayedKey{{Key: "rb/default/web", Delay: 30 * time.Second}}
			if diff := cmp.Diff(retry, f.queue.Delayed()); diff != "" {
				t.Errorf("retries (-want +got):\n%s", diff)
			}

			// Stored: the retry writes nothing, records nothing, retries again.
			obj := f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
			if diff := cmp.Diff([]workv1alpha2.TargetCluster{pt.At("a", 2)}, obj.Spec.Clusters); diff != "" {
				t.Errorf("stored spec.clusters (-want +got):\n%s", diff)
			}
			if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
				t.Fatal(err)
			}
			if n := len(f.client.Actions()); n != 0 {
				t.Errorf("retry made %d requests, want none", n)
			}
			if ev := f.events(); len(ev) != 0 {
				t.Errorf("retry recorded %v", ev)
			}
			if diff := cmp.Diff(retry, f.queue.Delayed()); diff != "" {
				t.Errorf("retry retries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReconcileSkips(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		binding   *workv1alpha2.ResourceBinding
		key       string
		wantWrite bool
	}{
		{name: "another scheduler", binding: newRB(func(b *workv1alpha2.ResourceBinding) { b.Spec.SchedulerName = "other" })},
		{name: "default scheduler by name", wantWrite: true,
			binding: newRB(func(b *workv1alpha2.ResourceBinding) { b.Spec.SchedulerName = DefaultSchedulerName })},
		{name: "scheduling suspended", binding: newRB(func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Suspension = &workv1alpha2.Suspension{Scheduling: ptr.To(true)}
		})},
		{name: "scheduling not suspended", wantWrite: true, binding: newRB(func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Suspension = &workv1alpha2.Suspension{Scheduling: ptr.To(false)}
		})},
		{name: "being deleted", binding: newRB(func(b *workv1alpha2.ResourceBinding) {
			b.DeletionTimestamp = &metav1.Time{Time: fixedNow}
			b.Finalizers = []string{workv1alpha2.BindingControllerFinalizer}
		})},
		{name: "no placement", binding: newRB(func(b *workv1alpha2.ResourceBinding) { b.Spec.Placement = nil })},
		{name: "binding gone", binding: newRB(), key: "rb/default/gone"},
		{name: "cluster binding gone", binding: newRB(), key: "crb/web"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), tc.binding)
			key := tc.key
			if key == "" {
				key = "rb/default/web"
			}
			if err := f.ctrl.reconcile(context.Background(), key); err != nil {
				t.Fatal(err)
			}
			var want []string
			if tc.wantWrite {
				want = []string{workv1alpha2.SchedulingSubresource}
			}
			f.writes(t, rbGVR, "default", "web", want...)
			if got := len(f.events()); got != map[bool]int{false: 0, true: 2}[tc.wantWrite] {
				t.Errorf("got %d events, want write %v", got, tc.wantWrite)
			}
			if d := f.queue.Delayed(); len(d) != 0 {
				t.Errorf("queued retries %v", d)
			}
		})
	}
}

func TestReconcileMalformedKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureClusters())
	if err := f.ctrl.reconcile(context.Background(), "default/web"); err == nil {
		t.Error("reconcile of a malformed key succeeded")
	}
}

func TestReconcilePatchErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		err     error
		wantErr string // "" when the error is swallowed
	}{
		{name: "conflict is retried", err: apierrors.NewConflict(rbGVR.GroupResource(), "web", fmt.Errorf("changed")), wantErr: "writing the scheduling decision"},
		{name: "deleted meanwhile", err: apierrors.NewNotFound(rbGVR.GroupResource(), "web")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), newRB())
			f.client.PrependReactor("patch", "resourcebindings", func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, tc.err
			})
			err := f.ctrl.reconcile(context.Background(), "rb/default/web")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("reconcile = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !apierrors.IsConflict(err)):
				t.Errorf("reconcile = %v, want a conflict wrapped in %q", err, tc.wantErr)
			}
			if ev := f.events(); len(ev) != 0 {
				t.Errorf("failed write recorded %v", ev)
			}
		})
	}
}

// A Divided binding whose clusters hold all its replicas under the placement
// it was scheduled with is left as it is when clusters change (Karmada's
// "Don't need to schedule"): a member back from an outage gets its
// replicas again only by a triggered reschedule. Here all of web's replicas
// are in a although the weights would give b one: scheduling would move it.
func TestReconcileSteady(t *testing.T) {
	t.Parallel()
	inA := func(b *workv1alpha2.ResourceBinding) { b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 2)} }
	tests := []struct {
		name   string
		mod    func(*workv1alpha2.ResourceBinding)
		writes []string
	}{
		{name: "steady: left as it is", mod: inA},
		{name: "a new generation: observed, not scheduled", mod: func(b *workv1alpha2.ResourceBinding) { inA(b); b.Generation = 4 },
			writes: []string{"status"}},
		{name: "a reschedule triggered", mod: func(b *workv1alpha2.ResourceBinding) {
			inA(b)
			b.Spec.RescheduleTriggeredAt = &metav1.Time{Time: b.Status.LastScheduledTime.Add(time.Minute)}
		}, writes: []string{workv1alpha2.SchedulingSubresource}},
		{name: "replicas changed", mod: func(b *workv1alpha2.ResourceBinding) { inA(b); b.Spec.Replicas = 3 },
			writes: []string{workv1alpha2.SchedulingSubresource}},
		{name: "a cluster evicted", mod: func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 1)}
		}, writes: []string{workv1alpha2.SchedulingSubresource}},
		{name: "placement changed", mod: func(b *workv1alpha2.ResourceBinding) {
			inA(b)
			b.Annotations[workv1alpha2.AppliedPlacementAnnotation] = `{"clusterAffinity":{"clusterNames":["a"]}}`
		}, writes: []string{workv1alpha2.SchedulingSubresource}},
		{name: "the last run failed", mod: func(b *workv1alpha2.ResourceBinding) {
			inA(b)
			b.Status.Conditions[0].Status, b.Status.Conditions[0].Reason = metav1.ConditionFalse, workv1alpha2.BindingReasonUnschedulable
		}, writes: []string{workv1alpha2.SchedulingSubresource}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), newRB(scheduledRB, tc.mod))
			if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
				t.Fatal(err)
			}
			bodies := f.writes(t, rbGVR, "default", "web", tc.writes...)
			if slices.Equal(tc.writes, []string{"status"}) {
				jsonEqual(t, `{"metadata": {"resourceVersion": "7"}, "status": {"schedulerObservedGeneration": 4}}`, bodies[0])
			}
		})
	}
}
