package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/estimator"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

// roomFor is an estimator of members with room for so many pods, whatever
// they request, of which the assumed pods take theirs.
func roomFor(pods map[string]int64) ReplicaEstimator {
	return func(cluster, _ string, _ *workv1alpha2.ReplicaRequirements, a estimator.Assumed) (int64, bool) {
		return max(pods[cluster]-a.Nodes.Pods(), 0), true
	}
}

// workload is the binding default/name of a Deployment of replicas, or
// with components a FlinkDeployment of a job manager and that many task
// managers, under placement.
func workload(name string, replicas int32, components bool, placement *policyv1alpha1.Placement) *workv1alpha2.ResourceBinding {
	return newRB(func(b *workv1alpha2.ResourceBinding) {
		b.Name = name
		b.Spec = *pt.BindingSpec(replicas, placement)
		if components {
			b.Spec.Replicas = 0
			b.Spec.Components = []workv1alpha2.Component{{Name: "jobmanager", Replicas: 1}, {Name: "taskmanager", Replicas: replicas}}
		}
	})
}

// result is where the stored binding is scheduled ("a:3", "a{jobmanager:1
// taskmanager:2}") or why it is not ("Unschedulable: ...").
func result(t *testing.T, f *fixture, name string) string {
	t.Helper()
	obj := f.resync(t, rbGVR, "default", name)
	b := bindingOf(obj)
	if c := meta.FindStatusCondition(b.status.Conditions, workv1alpha2.Scheduled); c != nil && c.Status != "True" {
		return c.Reason + ": " + c.Message
	}
	var parts []string
	for _, tc := range b.spec.Clusters {
		if len(tc.Components) == 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", tc.Name, tc.Replicas))
			continue
		}
		var comps []string
		for _, c := range tc.Components {
			comps = append(comps, fmt.Sprintf("%s:%d", c.Name, c.Replicas))
		}
		parts = append(parts, tc.Name+"{"+strings.Join(comps, " ")+"}")
	}
	return strings.Join(parts, ",")
}

// TestAssumedBurst: bindings scheduled one after the other, none of whose
// pods appear, stop fitting a cluster once what was assigned there fills
// it; without the bookkeeping every one of them fits.
func TestAssumedBurst(t *testing.T) {
	t.Parallel()
	aggregated := &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("a", "b"), ReplicaScheduling: pt.AggregatedRS()}
	onA := &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("a")}
	tests := []struct {
		name       string
		room       map[string]int64
		bindings   []*workv1alpha2.ResourceBinding
		ttl        time.Duration
		want       []string
		wantAssume int
	}{{
		name: "divided: the third goes where there is room left",
		room: map[string]int64{"a": 6, "b": 3},
		bindings: []*workv1alpha2.ResourceBinding{
			workload("w1", 3, false, aggregated), workload("w2", 3, false, aggregated), workload("w3", 3, false, aggregated),
		},
		ttl:  time.Minute,
		want: []string{"a:3", "a:3", "b:3"}, wantAssume: 3,
	}, {
		name: "divided: without assumptions every one fits the first cluster",
		room: map[string]int64{"a": 6, "b": 3},
		bindings: []*workv1alpha2.ResourceBinding{
			workload("w1", 3, false, aggregated), workload("w2", 3, false, aggregated), workload("w3", 3, false, aggregated),
		},
		want: []string{"a:3", "a:3", "a:3"},
	}, {
		name: "divided: no cluster has room left",
		room: map[string]int64{"a": 3, "b": 2},
		bindings: []*workv1alpha2.ResourceBinding{
			workload("w1", 3, false, aggregated), workload("w2", 3, false, aggregated),
		},
		ttl:  time.Minute,
		want: []string{"a:3", "Unschedulable: Clusters available replicas 2 are not enough to schedule."}, wantAssume: 1,
	}, {
		name: "components: whole sets until the cluster is full",
		room: map[string]int64{"a": 7},
		bindings: []*workv1alpha2.ResourceBinding{
			workload("f1", 2, true, onA), workload("f2", 2, true, onA), workload("f3", 2, true, onA),
		},
		ttl: time.Minute,
		want: []string{"a{jobmanager:1 taskmanager:2}", "a{jobmanager:1 taskmanager:2}",
			"Unschedulable: 0/2 clusters are available: 1 cluster(s) cannot host a whole set of the components, 1 cluster(s) did not match the placement cluster affinity constraint."},
		wantAssume: 2,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs := make([]runtime.Object, len(tc.bindings))
			for i, b := range tc.bindings {
				objs[i] = b
			}
			f := newFixture(t, fixtureClusters(), objs...)
			f.ctrl.estimate = roomFor(tc.room)
			f.ctrl.SetAssumptionTTL(tc.ttl)
			for i, b := range tc.bindings {
				if err := f.ctrl.reconcile(context.Background(), "rb/default/"+b.Name); err != nil {
					t.Fatal(err)
				}
				if got := result(t, f, b.Name); got != tc.want[i] {
					t.Errorf("%s: %q, want %q", b.Name, got, tc.want[i])
				}
			}
			if got := f.ctrl.assumed.Len(); got != tc.wantAssume {
				t.Errorf("%d assumptions, want %d", got, tc.wantAssume)
			}
		})
	}
}

// TestAssumedRelease: what a binding shows releases its assumptions, and
// a binding waiting for room is then placed.
func TestAssumedRelease(t *testing.T) {
	t.Parallel()
	onA := &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("a")}
	tests := []struct {
		name string
		// change edits w1 as stored after its scheduling; nil deletes it.
		change func(*workv1alpha2.ResourceBinding)
		want   string
	}{{
		name: "its pods are reported",
		change: func(b *workv1alpha2.ResourceBinding) {
			b.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "a", Applied: true,
				Health: workv1alpha2.ResourceUnhealthy, Status: &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)}}}
		},
		want: "a:3",
	}, {
		name: "it is healthy",
		change: func(b *workv1alpha2.ResourceBinding) {
			b.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "a", Applied: true, Health: workv1alpha2.ResourceHealthy}}
		},
		want: "a:3",
	}, {
		name: "its cluster is withdrawn",
		change: func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Clusters = nil
		},
		want: "a:3",
	}, {
		name: "it is deleted",
		want: "a:3",
	}, {
		name: "applied, no health, no replicas: kept",
		change: func(b *workv1alpha2.ResourceBinding) {
			b.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "a", Applied: true,
				Health: workv1alpha2.ResourceUnknown, Status: &runtime.RawExtension{Raw: []byte(`{"phase":"Running"}`)}}}
		},
		want: "Unschedulable: Clusters available replicas 1 are not enough to schedule.",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			placement := &policyv1alpha1.Placement{ClusterAffinity: onA.ClusterAffinity, ReplicaScheduling: pt.AggregatedRS()}
			f := newFixture(t, fixtureClusters(), workload("w1", 3, false, placement), workload("w2", 3, false, placement))
			f.ctrl.estimate = roomFor(map[string]int64{"a": 4})
			f.ctrl.SetAssumptionTTL(time.Minute)
			for _, name := range []string{"w1", "w2"} {
				if err := f.ctrl.reconcile(context.Background(), "rb/default/"+name); err != nil {
					t.Fatal(err)
				}
			}
			if got := result(t, f, "w2"); !strings.HasPrefix(got, "Unschedulable") {
				t.Fatalf("w2 before the release: %q, want Unschedulable", got)
			}
			w1 := bindingOf(f.resync(t, rbGVR, "default", "w1")).obj.(*workv1alpha2.ResourceBinding).DeepCopy()
			if tc.change == nil {
				if err := f.rbs.Delete(w1); err != nil {
					t.Fatal(err)
				}
			} else {
				tc.change(w1)
				w1.ResourceVersion += "0"
				f.store(t, w1)
			}
			f.ctrl.observeAssumed(w1)
			if err := f.ctrl.reconcile(context.Background(), "rb/default/w2"); err != nil {
				t.Fatal(err)
			}
			if got := result(t, f, "w2"); got != tc.want {
				t.Errorf("w2 after w1 changed: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAssumedWriteFails: a result assumed as it is decided is taken back
// when its write fails, and kept when it is written.
func TestAssumedWriteFails(t *testing.T) {
	t.Parallel()
	placement := &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("a"), ReplicaScheduling: pt.AggregatedRS()}
	for _, fail := range []bool{true, false} {
		t.Run(fmt.Sprintf("fail=%t", fail), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureClusters(), workload("w1", 3, false, placement))
			f.ctrl.estimate = roomFor(map[string]int64{"a": 4})
			f.ctrl.SetAssumptionTTL(time.Minute)
			if fail {
				f.client.PrependReactor("patch", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewConflict(rbGVR.GroupResource(), "w1", errors.New("changed"))
				})
			}
			err := f.ctrl.reconcile(context.Background(), "rb/default/w1")
			if (err != nil) != fail {
				t.Fatalf("reconcile() = %v", err)
			}
			want := 1
			if fail {
				want = 0
			}
			if got := f.ctrl.assumed.Len(); got != want {
				t.Errorf("%d assumptions, want %d", got, want)
			}
		})
	}
}

// TestAssumedSideBySide: two workers deciding at once do not both take
// the room one of them assumes. The estimator holds the first two
// estimates until both are made, or a while: deciding and assuming being
// one step, the second waits for the first's assumption instead.
func TestAssumedSideBySide(t *testing.T) {
	t.Parallel()
	placement := &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("a"), ReplicaScheduling: pt.AggregatedRS()}
	f := newFixture(t, fixtureClusters(), workload("w1", 3, false, placement), workload("w2", 3, false, placement))
	f.ctrl.SetAssumptionTTL(time.Minute)
	var calls atomic.Int32
	both := make(chan struct{})
	room := roomFor(map[string]int64{"a": 4})
	f.ctrl.estimate = func(cluster, ns string, req *workv1alpha2.ReplicaRequirements, a estimator.Assumed) (int64, bool) {
		switch calls.Add(1) {
		case 1:
			select {
			case <-both:
			case <-time.After(300 * time.Millisecond):
			}
		case 2:
			close(both)
		}
		return room(cluster, ns, req, a)
	}
	var wg sync.WaitGroup
	for _, name := range []string{"w1", "w2"} {
		wg.Go(func() {
			if err := f.ctrl.reconcile(context.Background(), "rb/default/"+name); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := []string{result(t, f, "w1"), result(t, f, "w2")}
	slices.Sort(got)
	if want := []string{"Unschedulable: Clusters available replicas 1 are not enough to schedule.", "a:3"}; !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
}
