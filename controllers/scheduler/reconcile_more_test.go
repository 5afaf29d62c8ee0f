package scheduler

import (
	"context"
	"strings"
	"testing"
	"time"

	pt "github.com/flotilla-io/flotilla/placement/placementtest"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// The rest of the status survives a write; the Scheduled condition keeps
// its transition time when its status does not change.
func TestReconcileKeepsOtherConditions(t *testing.T) {
	t.Parallel()
	earlier := metav1.NewTime(fixedNow.Add(-time.Hour))
	f := newFixture(t, fixtureClusters(), newRB(scheduledRB, func(b *workv1alpha2.ResourceBinding) {
		b.Generation = 4
		b.Status.Conditions = []metav1.Condition{
			{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: earlier,
				Reason: workv1alpha2.FullyAppliedSuccessReason, Message: "applied"},
			// An older message: the run writes the condition (not steady).
			{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: earlier,
				Reason: workv1alpha2.BindingReasonSuccess, Message: "Scheduled."},
		}
	}))
	if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
		t.Fatal(err)
	}
	// The result is the one held: the status alone is written.
	jsonEqual(t, `{
	  "metadata": {"resourceVersion": "7"},
	  "status": {
	    "schedulerObservedGeneration": 4, "lastScheduledTime": "`+fixedNowJSON+`", "schedulerObservingAffinityName": null,
	    "conditions": [
	      {"type": "FullyApplied", "status": "True", "observedGeneration": 3, "lastTransitionTime": "2026-01-02T02:04:05Z",
	        "reason": "FullyAppliedSuccess", "message": "applied"},
	      {"type": "Scheduled", "status": "True", "observedGeneration": 4, "lastTransitionTime": "2026-01-02T02:04:05Z",
	        "reason": "Success", "message": "Binding has been scheduled successfully."}]
	  }
	}`, f.writes(t, rbGVR, "default", "web", "status")[0])
}

func TestReconcileAffinityName(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureClusters(), newRB(func(b *workv1alpha2.ResourceBinding) {
		b.Spec.Placement = &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
			{AffinityName: "primary", ClusterAffinity: *pt.OnClusters("zzz")},
			{AffinityName: "backup", ClusterAffinity: *pt.OnClusters("b")},
		}}
	}))
	if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
		t.Fatal(err)
	}
	f.writes(t, rbGVR, "default", "web", workv1alpha2.SchedulingSubresource)
	obj := f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
	if got := obj.Status.SchedulerObservedAffinityName; got != "backup" {
		t.Errorf("schedulerObservingAffinityName = %q, want backup", got)
	}
	if diff := cmp.Diff([]workv1alpha2.TargetCluster{pt.At("b", 2)}, obj.Spec.Clusters); diff != "" {
		t.Errorf("spec.clusters (-want +got):\n%s", diff)
	}
	// The earlier term becomes eligible: the binding stays on backup (a
	// Duplicated binding's run is stamped, its result unchanged)...
	if err := f.clustersI.Add(pt.Cluster("zzz", pt.WithPods("10"))); err != nil {
		t.Fatal(err)
	}
	if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, `{"metadata":{"resourceVersion":"8"},"status":{"schedulerObservedGeneration":4,"lastScheduledTime":"`+fixedNowJSON+`"}}`,
		f.writes(t, rbGVR, "default", "web", "status")[0])
	obj = f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
	if got := obj.Status.SchedulerObservedAffinityName; got != "backup" {
		t.Errorf("after primary became eligible: schedulerObservingAffinityName = %q, want backup", got)
	}
	// ...until a reschedule is asked for (a WorkloadRebalancer).
	later := metav1.NewTime(fixedNow.Add(time.Minute))
	obj.Spec.RescheduleTriggeredAt = &later
	f.store(t, obj)
	if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
		t.Fatal(err)
	}
	f.writes(t, rbGVR, "default", "web", workv1alpha2.SchedulingSubresource)
	obj = f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
	if got := obj.Status.SchedulerObservedAffinityName; got != "primary" {
		t.Errorf("after a reschedule: schedulerObservingAffinityName = %q, want primary", got)
	}
	if diff := cmp.Diff([]workv1alpha2.TargetCluster{pt.At("zzz", 2)}, obj.Spec.Clusters); diff != "" {
		t.Errorf("after a reschedule: spec.clusters (-want +got):\n%s", diff)
	}
}

// Every successful run Karmada makes is stamped (lastScheduledTime,
// schedulerObservedGeneration) and reported, even when the result is the
// one the binding holds; a Divided workload with nothing changed is not
// run again, so not stamped.
func TestReconcileStampsEverySuccessfulRun(t *testing.T) {
	t.Parallel()
	duplicated := func(b *workv1alpha2.ResourceBinding) {
		b.Spec.Placement = &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("a", "b")}
		b.Annotations[workv1alpha2.AppliedPlacementAnnotation] = `{"clusterAffinity":{"clusterNames":["a","b"]}}`
		b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2)}
	}
	for _, tc := range []struct {
		name  string
		mod   func(*workv1alpha2.ResourceBinding)
		quiet bool // queued by an informer's initial list (a restart)
		stamp bool
	}{
		{name: "divided, nothing changed", mod: func(*workv1alpha2.ResourceBinding) {}},
		{name: "duplicated, queued at start-up: a restart writes nothing", mod: duplicated, quiet: true},
		{name: "duplicated", stamp: true, mod: func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Placement = &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("a", "b")}
			b.Annotations[workv1alpha2.AppliedPlacementAnnotation] = `{"clusterAffinity":{"clusterNames":["a","b"]}}`
			b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2)}
		}},
		{name: "no replicas", stamp: true, mod: func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Placement = &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("a", "b")}
			b.Annotations[workv1alpha2.AppliedPlacementAnnotation] = `{"clusterAffinity":{"clusterNames":["a","b"]}}`
			b.Spec.Replicas, b.Spec.ReplicaRequirements = 0, nil
			b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 0), pt.At("b", 0)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), newRB(scheduledRB, tc.mod))
			if tc.quiet {
				f.ctrl.enqueueAll(false, true)
				f.queue.Keys()
			}
			if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
				t.Fatal(err)
			}
			if !tc.stamp {
				if n := len(f.client.Actions()); n != 0 {
					t.Errorf("made %d requests, want none", n)
				}
				return
			}
			jsonEqual(t, `{"metadata":{"resourceVersion":"7"},"status":{"schedulerObservedGeneration":3,"lastScheduledTime":"`+fixedNowJSON+`"}}`,
				f.writes(t, rbGVR, "default", "web", "status")[0])
			if ev := f.events(); len(ev) != 2 || !strings.Contains(ev[0], "ScheduleBindingSucceed") {
				t.Errorf("events %q, want ScheduleBindingSucceed on the binding and the template", ev)
			}
		})
	}
}

// rescheduleTriggeredAt newer than lastScheduledTime redistributes
// everything; older keeps the current assignment.
func TestReconcileFresh(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		last      time.Time     // lastScheduledTime; an hour ago when zero
		triggered time.Duration // relative to lastScheduledTime
		observed  string        // the ObservedRescheduleTriggerAnnotation
		want      []workv1alpha2.TargetCluster
		wantLast  time.Time // the clock when zero
		stale     bool      // the trigger is not run for
	}{
		// a: 10 free + 4 held = 14, b: 10. 4 over 14:10: a, b, a, b.
		{name: "reschedule triggered after the last scheduling", triggered: time.Minute, want: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2)}},
		{name: "reschedule triggered before the last scheduling", triggered: -time.Minute, want: []workv1alpha2.TargetCluster{pt.At("a", 4)}, stale: true},
		// A WorkloadRebalancer created in the second of the last run
		// triggers the second after it, ahead of this clock: the run is
		// stamped at the trigger, or the trigger would stay fresh.
		{name: "reschedule triggered ahead of the clock", last: fixedNow, triggered: time.Second,
			want: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2)}, wantLast: fixedNow.Add(time.Second)},
		// A WorkloadRebalancer created in the second of the last run: its
		// trigger (its creation time, as Karmada writes it) equals
		// lastScheduledTime. Run once, and remembered as observed.
		{name: "reschedule triggered in the second of the last run", last: fixedNow, triggered: 0,
			want: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2)}},
		{name: "reschedule triggered in the second of the last run, an older trigger observed", last: fixedNow, triggered: 0,
			observed: fixedNow.Add(-time.Minute).UTC().Format(time.RFC3339), want: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2)}},
		{name: "reschedule triggered in the second of the last run, already run for", last: fixedNow, triggered: 0,
			observed: fixedNow.UTC().Format(time.RFC3339), want: []workv1alpha2.TargetCluster{pt.At("a", 4)}, stale: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), newRB(scheduledRB, func(b *workv1alpha2.ResourceBinding) {
				b.Generation = 4
				b.Spec.Replicas = 4
				b.Spec.Placement = &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()}
				b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 4)}
				if !tc.last.IsZero() {
					b.Status.LastScheduledTime = &metav1.Time{Time: tc.last}
				}
				b.Spec.RescheduleTriggeredAt = &metav1.Time{Time: b.Status.LastScheduledTime.Add(tc.triggered)}
				if tc.observed != "" {
					b.Annotations[workv1alpha2.ObservedRescheduleTriggerAnnotation] = tc.observed
				}
			}))
			if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
				t.Fatal(err)
			}
			f.writes(t, rbGVR, "default", "web", workv1alpha2.SchedulingSubresource)
			obj := f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
			wantObserved := tc.observed // a trigger not run for leaves it
			if !tc.stale {
				wantObserved = obj.Spec.RescheduleTriggeredAt.UTC().Format(time.RFC3339)
			}
			if got := obj.Annotations[workv1alpha2.ObservedRescheduleTriggerAnnotation]; got != wantObserved {
				t.Errorf("observed trigger %q, want %q", got, wantObserved)
			}
			if obj.Status.LastScheduledTime.Before(obj.Spec.RescheduleTriggeredAt) {
				t.Errorf("lastScheduledTime %v before the trigger %v", obj.Status.LastScheduledTime, obj.Spec.RescheduleTriggeredAt)
			}
			if diff := cmp.Diff(tc.want, obj.Spec.Clusters); diff != "" {
				t.Errorf("spec.clusters (-want +got):\n%s", diff)
			}
			wantLast := tc.wantLast
			if wantLast.IsZero() {
				wantLast = fixedNow
			}
			if got := obj.Status.LastScheduledTime; got == nil || !got.Time.Equal(wantLast) {
				t.Errorf("lastScheduledTime = %v, want %v", got, wantLast)
			}
			// Run again: the trigger is served, nothing to write.
			if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
				t.Fatal(err)
			}
			if ps := f.patches(t); len(ps) != 0 {
				t.Errorf("the served trigger was run again: %s", ps[0].GetPatch())
			}
		})
	}
}

// Karmada's scheduleResourceBindingWithClusterAffinity goes on to patch
// (clean up) the result on a FitError: spec.clusters becomes empty and the
// placement is recorded as applied. Only other errors keep the old result.
func TestReconcileNoClusterFitClearsClusters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureClusters(), newRB(scheduledRB, func(b *workv1alpha2.ResourceBinding) {
		b.Generation = 4
		b.Spec.Placement = &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("zzz")}
	}))
	if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
		t.Fatal(err)
	}
	f.writes(t, rbGVR, "default", "web", workv1alpha2.SchedulingSubresource)
	obj := f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
	if len(obj.Spec.Clusters) != 0 {
		t.Errorf("spec.clusters = %v, want none", obj.Spec.Clusters)
	}
	if got, want := obj.Annotations[workv1alpha2.AppliedPlacementAnnotation], `{"clusterAffinity":{"clusterNames":["zzz"]}}`; got != want {
		t.Errorf("applied placement = %s, want %s", got, want)
	}
}

// Karmada's patchBindingStatusCondition: "Postpone setting observed
// generation until schedule succeed" — a failed decision leaves
// schedulerObservedGeneration behind metadata.generation (scheduling
// pending, as the field's doc says).
func TestReconcileFailureLeavesObservedGeneration(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureClusters(), newRB(scheduledRB, func(b *workv1alpha2.ResourceBinding) {
		b.Generation = 4
		b.Spec.Replicas = 30
		b.Spec.Placement = &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()}
	}))
	if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
		t.Fatal(err)
	}
	f.writes(t, rbGVR, "default", "web", "status")
	obj := f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
	if got := obj.Status.SchedulerObservedGeneration; got != 3 {
		t.Errorf("schedulerObservedGeneration = %d after a failure at generation 4, want 3 (unchanged)", got)
	}
}

// A key queued again before the scheduler's own write reaches the cache
// (another event queued it meanwhile) must not decide on the stale binding:
// that write would only conflict.
func TestReconcileWaitsForOwnWrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureClusters(), newRB())
	if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
		t.Fatal(err)
	}
	f.writes(t, rbGVR, "default", "web", workv1alpha2.SchedulingSubresource)
	f.client.ClearActions()
	if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.client.Actions()); n != 0 {
		t.Errorf("a reconcile on the stale cache made %d requests, want none", n)
	}
	// Once the cache holds the write, the binding is up to date.
	f.resync(t, rbGVR, "default", "web")
	if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.client.Actions()); n != 0 {
		t.Errorf("an up-to-date binding made %d requests, want none", n)
	}
}

// The peers of a workload affinity group are the other ResourceBindings of
// the namespace in the same group, where they are scheduled.
func TestReconcileWorkloadAffinityPeers(t *testing.T) {
	t.Parallel()
	group := &workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "app=shop"}
	peer := newRB(func(b *workv1alpha2.ResourceBinding) {
		b.Name = "cart"
		b.Spec.WorkloadAffinityGroups = group
		b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("b", 1)}
	})
	other := newRB(func(b *workv1alpha2.ResourceBinding) {
		b.Name = "elsewhere"
		b.Namespace = "other"
		b.Spec.WorkloadAffinityGroups = group
		b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 1)}
	})
	f := newFixture(t, fixtureClusters(), peer, other, newRB(func(b *workv1alpha2.ResourceBinding) {
		b.Spec.WorkloadAffinityGroups = group
		b.Spec.Placement = &policyv1alpha1.Placement{}
	}))
	if err := f.ctrl.reconcile(context.Background(), "rb/default/web"); err != nil {
		t.Fatal(err)
	}
	f.writes(t, rbGVR, "default", "web", workv1alpha2.SchedulingSubresource)
	obj := f.resync(t, rbGVR, "default", "web").(*workv1alpha2.ResourceBinding)
	if diff := cmp.Diff([]workv1alpha2.TargetCluster{pt.At("b", 2)}, obj.Spec.Clusters); diff != "" {
		t.Errorf("spec.clusters (-want +got):\n%s", diff)
	}
}

// TestRescheduleTriggered: Karmada's rule (a trigger after the last run is
// fresh) and the same-second cases, where only the observed trigger tells.
func TestRescheduleTriggered(t *testing.T) {
	t.Parallel()
	at := func(s string) *metav1.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return &metav1.Time{Time: v}
	}
	for _, tc := range []struct {
		name          string
		trigger, last *metav1.Time
		observed      string
		want          bool
	}{
		{name: "no trigger", last: at("2026-01-01T00:00:05Z")},
		{name: "never scheduled", trigger: at("2026-01-01T00:00:05Z"), want: true},
		{name: "after the last run", trigger: at("2026-01-01T00:00:06Z"), last: at("2026-01-01T00:00:05Z"), want: true},
		{name: "before the last run", trigger: at("2026-01-01T00:00:04Z"), last: at("2026-01-01T00:00:05Z")},
		{name: "before the last run, never observed", trigger: at("2026-01-01T00:00:04Z"), last: at("2026-01-01T00:00:05Z"), observed: ""},
		{name: "same second, not run for", trigger: at("2026-01-01T00:00:05Z"), last: at("2026-01-01T00:00:05Z"), want: true},
		{name: "same second, an older trigger run for", trigger: at("2026-01-01T00:00:05Z"), last: at("2026-01-01T00:00:05Z"),
			observed: "2026-01-01T00:00:01Z", want: true},
		{name: "same second, run for", trigger: at("2026-01-01T00:00:05Z"), last: at("2026-01-01T00:00:05Z"), observed: "2026-01-01T00:00:05Z"},
		{name: "same second, sub-second times (not yet stored)", trigger: at("2026-01-01T00:00:05.9Z"), last: at("2026-01-01T00:00:05.1Z"),
			observed: "2026-01-01T00:00:05Z"},
		{name: "same second in another zone, run for", trigger: &metav1.Time{Time: at("2026-01-01T00:00:05Z").In(time.FixedZone("x", 3600))},
			last: at("2026-01-01T00:00:05Z"), observed: "2026-01-01T00:00:05Z"},
	} {
		if got := rescheduleTriggered(tc.trigger, tc.last, tc.observed); got != tc.want {
			t.Errorf("%s: rescheduleTriggered = %v, want %v", tc.name, got, tc.want)
		}
	}
}
