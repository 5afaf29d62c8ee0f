package scheduler

import (
	"slices"
	"testing"

	pt "github.com/flotilla-io/flotilla/placement/placementtest"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

func TestBindingChanged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*workv1alpha2.ResourceBinding)
		want bool
	}{
		{name: "status only (aggregated status)", mod: func(b *workv1alpha2.ResourceBinding) {
			b.ResourceVersion = "8"
			b.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "a"}}
		}},
		{name: "other annotation", mod: func(b *workv1alpha2.ResourceBinding) { b.Annotations["x"] = "y" }},
		{name: "new generation", want: true, mod: func(b *workv1alpha2.ResourceBinding) { b.Generation = 4 }},
		{name: "applied placement changed by someone else", want: true, mod: func(b *workv1alpha2.ResourceBinding) {
			b.Annotations[workv1alpha2.AppliedPlacementAnnotation] = "{}"
		}},
		{name: "applied placement removed", want: true, mod: func(b *workv1alpha2.ResourceBinding) {
			delete(b.Annotations, workv1alpha2.AppliedPlacementAnnotation)
		}},
		{name: "observed generation reset", want: true, mod: func(b *workv1alpha2.ResourceBinding) { b.Status.SchedulerObservedGeneration = 2 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := newRB(scheduledRB)
			cur := old.DeepCopy()
			tc.mod(cur)
			if got := bindingChanged(bindingOf(old), bindingOf(cur)); got != tc.want {
				t.Errorf("bindingChanged = %v, want %v", got, tc.want)
			}
			// The same holds for cluster bindings.
			oldC := &workv1alpha2.ClusterResourceBinding{ObjectMeta: old.ObjectMeta, Spec: old.Spec, Status: old.Status}
			curC := &workv1alpha2.ClusterResourceBinding{ObjectMeta: cur.ObjectMeta, Spec: cur.Spec, Status: cur.Status}
			if got := bindingChanged(bindingOf(oldC), bindingOf(curC)); got != tc.want {
				t.Errorf("bindingChanged (cluster binding) = %v, want %v", got, tc.want)
			}
		})
	}
	if !bindingChanged(nil, bindingOf(newRB())) || !bindingChanged(bindingOf(newRB()), bindingOf("not a binding")) {
		t.Error("bindingChanged with an unknown object = false, want true")
	}
}

func TestClusterChanged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*clusterv1alpha1.Cluster)
		want bool
	}{
		{name: "capacity only", mod: func(c *clusterv1alpha1.Cluster) {
			c.ResourceVersion = "2"
			c.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{Allocatable: pt.RL("pods", "5")}
		}},
		{name: "conditions only", mod: func(c *clusterv1alpha1.Cluster) {
			c.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}}
		}},
		{name: "labels", want: true, mod: pt.WithLabels("env", "prod")},
		{name: "taint", want: true, mod: pt.WithTaint("k", "", corev1.TaintEffectNoSchedule)},
		{name: "region", want: true, mod: pt.WithRegion("eu")},
		{name: "deletion", want: true, mod: pt.BeingDeleted()},
		{name: "APIs", want: true, mod: pt.WithoutAPIs()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := pt.Cluster("a", pt.WithPods("10"))
			cur := old.DeepCopy()
			tc.mod(cur)
			if got := clusterChanged(old, cur); got != tc.want {
				t.Errorf("clusterChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEnqueue(t *testing.T) {
	t.Parallel()
	failed := func(b *workv1alpha2.ResourceBinding) {
		b.Status.Conditions = []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse, Reason: workv1alpha2.BindingReasonNoClusterFit}}
	}
	named := func(ns, name string) func(*workv1alpha2.ResourceBinding) {
		return func(b *workv1alpha2.ResourceBinding) { b.Namespace, b.Name = ns, name }
	}
	bindings := []runtime.Object{
		newRB(named("ns1", "scheduled"), scheduledRB),
		newRB(named("ns1", "failed"), failed),
		newRB(named("ns2", "new")),
		newCRB(func(b *workv1alpha2.ClusterResourceBinding) { b.Name = "cluster-new" }),
		newCRB(func(b *workv1alpha2.ClusterResourceBinding) {
			b.Name = "cluster-scheduled"
			b.Status.Conditions = []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: "Success"}}
		}),
	}
	tests := []struct {
		name            string
		unscheduledOnly bool
		want            []string
	}{
		{name: "every binding", want: []string{"crb/cluster-new", "crb/cluster-scheduled", "rb/ns1/failed", "rb/ns1/scheduled", "rb/ns2/new"}},
		{name: "unscheduled only", unscheduledOnly: true, want: []string{"crb/cluster-new", "rb/ns1/failed", "rb/ns2/new"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, bindings...)
			f.ctrl.enqueueAll(tc.unscheduledOnly, false)
			got := f.queue.Keys()
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("queued (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("one binding", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		f.ctrl.enqueueBinding(newRB(), false)
		f.ctrl.enqueueBinding(newCRB(), false)
		f.ctrl.enqueueBinding(pt.Cluster("a"), false)
		if diff := cmp.Diff([]string{"rb/default/web", "crb/web"}, f.queue.Keys()); diff != "" {
			t.Errorf("queued (-want +got):\n%s", diff)
		}
	})
}

func TestSplitKey(t *testing.T) {
	t.Parallel()
	type split struct {
		Cluster         bool
		Namespace, Name string
		OK              bool
	}
	tests := []struct {
		key  string
		want split
	}{
		{"rb/default/web", split{false, "default", "web", true}},
		{"crb/web", split{true, "", "web", true}},
		{"rb/web", split{false, "web", "", false}},
		{"default/web", split{}},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			t.Parallel()
			var got split
			got.Namespace, got.Name, got.Cluster, got.OK = names.ParseBindingKey(tc.key)
			if got.OK != tc.want.OK || (got.OK && got != tc.want) {
				t.Errorf("ParseBindingKey(%q) = %+v, want %+v", tc.key, got, tc.want)
			}
		})
	}
}
