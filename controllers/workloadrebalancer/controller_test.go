package workloadrebalancer

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
	appslisters "github.com/flotilla-io/flotilla/apis/generated/listers/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
)

// fakeBindings holds bindings' rescheduleTriggeredAt by "namespace/name".
type fakeBindings struct {
	at       map[string]*metav1.Time
	failOnce map[string]bool
	triggers []string
}

func (f *fakeBindings) bindings() Bindings {
	return Bindings{
		Triggered: func(_ context.Context, ns, name string) (*metav1.Time, error) {
			at, ok := f.at[ns+"/"+name]
			if !ok {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "resourcebindings"}, name)
			}
			return at, nil
		},
		Trigger: func(_ context.Context, ns, name string, at metav1.Time) error {
			if f.failOnce[ns+"/"+name] {
				delete(f.failOnce, ns+"/"+name)
				return errors.New("busy")
			}
			f.at[ns+"/"+name] = &at
			f.triggers = append(f.triggers, ns+"/"+name)
			return nil
		},
	}
}

func TestReconcile(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := created.Add(time.Minute)
	older, newer := metav1.NewTime(created.Add(-time.Hour)), metav1.NewTime(created.Add(time.Second))
	a, b, c, d := ref("Deployment", "ns", "a"), ref("Deployment", "ns", "b"), ref("ClusterRole", "", "c"), ref("Deployment", "ns", "gone")
	fb := &fakeBindings{at: map[string]*metav1.Time{"ns/a-deployment": nil, "ns/b-deployment": &older, "/c-clusterrole": &newer},
		failOnce: map[string]bool{"ns/b-deployment": true}}
	r := &appsv1alpha1.WorkloadRebalancer{ObjectMeta: metav1.ObjectMeta{Name: "r", CreationTimestamp: created, Generation: 1, ResourceVersion: "5"},
		Spec: appsv1alpha1.WorkloadRebalancerSpec{Workloads: []appsv1alpha1.ObjectReference{a, b, c, d}, TTLSecondsAfterFinished: ptr.To[int32](30)}}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = store.Add(r)
	var statuses []appsv1alpha1.WorkloadRebalancerStatus
	var removed []string
	c1 := &Controller{rebalancers: appslisters.NewWorkloadRebalancerLister(store), bindings: fb.bindings(),
		patchStatus: func(_ context.Context, _ string, body []byte) error {
			var p struct {
				Status appsv1alpha1.WorkloadRebalancerStatus
			}
			if err := json.Unmarshal(body, &p); err != nil {
				return err
			}
			statuses = append(statuses, p.Status)
			cur := r.DeepCopy()
			cur.Status = p.Status
			return store.Update(cur)
		},
		remove: func(_ context.Context, name, rv string) error { removed = append(removed, name+"@"+rv); return nil },
		queue:  worker.NewQueue("test"), now: func() time.Time { return now }}
	defer c1.queue.ShutDown()

	// First pass: a (never triggered) and c... c was triggered after the
	// rebalancer: left alone but successful; b fails once; gone is missing.
	if err := c1.reconcile(context.Background(), "r"); err == nil {
		t.Fatal("a workload failed to trigger: want an error to retry")
	}
	last := statuses[len(statuses)-1]
	want := map[string]appsv1alpha1.RebalanceResult{"a": "Successful", "b": "", "c": "Successful", "gone": "Failed"}
	for _, o := range last.ObservedWorkloads {
		if o.Result != want[o.Workload.Name] {
			t.Errorf("%s: result %q, want %q", o.Workload.Name, o.Result, want[o.Workload.Name])
		}
		if o.Workload.Name == "gone" && o.Reason != appsv1alpha1.RebalanceObjectNotFound {
			t.Errorf("gone: reason %q", o.Reason)
		}
	}
	if last.FinishTime != nil || last.ObservedGeneration != 1 {
		t.Errorf("status %+v: want no finishTime while a workload is pending", last)
	}
	if len(fb.triggers) != 1 || fb.triggers[0] != "ns/a-deployment" || !fb.at["ns/a-deployment"].Equal(&created) {
		t.Errorf("triggers %v (a at %v), want only a, at the rebalancer's creation", fb.triggers, fb.at["ns/a-deployment"])
	}

	// Retry: b triggered, finished, TTL not yet over: no deletion.
	if err := c1.reconcile(context.Background(), "r"); err != nil {
		t.Fatal(err)
	}
	last = statuses[len(statuses)-1]
	if last.FinishTime == nil || !last.FinishTime.Time.Equal(now) || last.ObservedWorkloads[1].Result != "Successful" {
		t.Errorf("status %+v: want b successful and finishTime now", last)
	}
	if len(fb.triggers) != 2 || len(removed) != 0 {
		t.Errorf("triggers %v removed %v: want b triggered once more and nothing removed", fb.triggers, removed)
	}
	// As Karmada: the trigger is the rebalancer's creation time itself,
	// whenever the binding was last scheduled (the scheduler honours a
	// trigger in the second of its last run).
	if !fb.at["ns/b-deployment"].Equal(&created) {
		t.Errorf("b triggered at %v, want %v (the rebalancer's creation)", fb.at["ns/b-deployment"], created)
	}

	// Nothing changed: no write; after the TTL: removed at its version.
	n := len(statuses)
	now = now.Add(31 * time.Second)
	if err := c1.reconcile(context.Background(), "r"); err != nil {
		t.Fatal(err)
	}
	if len(statuses) != n || len(fb.triggers) != 2 {
		t.Errorf("a finished rebalancer wrote its status again or triggered again")
	}
	if len(removed) != 1 || removed[0] != "r@5" {
		t.Errorf("removed %v, want r at its resourceVersion after the TTL", removed)
	}
}
