package status

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// drain returns the queued keys and empties the queue.
// drain returns the queued keys, sorted, once the coalescing delay of Work
// status changes has passed.
func drain(f *fixture) []string {
	time.Sleep(workStatusCoalesce + 100*time.Millisecond)
	var keys []string
	for f.c.queue.Len() > 0 {
		k, _ := f.c.queue.Get()
		keys = append(keys, k)
		f.c.queue.Done(k)
	}
	return keys
}

func TestHandlers(t *testing.T) {
	t.Parallel()
	nginx := rbKey("default", "nginx-deployment")
	applied := func(w *workv1alpha1.Work) *workv1alpha1.Work {
		w = w.DeepCopy()
		w.Status.Conditions[0].Status = metav1.ConditionTrue
		return w
	}
	moved := func(w *workv1alpha1.Work) *workv1alpha1.Work {
		w = w.DeepCopy()
		w.Annotations[workv1alpha2.ResourceBindingNameAnnotationKey] = "other-deployment"
		return w
	}
	rescheduled := rb("m1", "m3")
	statusWiped := rb("m1", "m2")
	statusWiped.Status.Conditions = nil
	withFullyApplied := rb("m1", "m2")
	withFullyApplied.Status.Conditions = append(withFullyApplied.Status.Conditions, metav1.Condition{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue})
	resynced := rb("m1", "m2")
	resynced.ResourceVersion = "4"

	tests := []struct {
		name   string
		events func(f *fixture)
		want   []string
	}{{
		name: "Works of one binding coalesce into one key",
		events: func(f *fixture) {
			for _, c := range []string{"m1", "m2", "m3"} {
				w := work(t, c, metav1.ConditionFalse, "", nil)
				f.c.onWork(w)
				f.c.onWorkUpdate(w, applied(w))
			}
			f.c.onWork(cache.DeletedFinalStateUnknown{Key: "karmada-es-m1/nginx", Obj: work(t, "m1", metav1.ConditionTrue, "", nil)})
		},
		want: []string{nginx},
	}, {
		name: "Work update without change is ignored",
		events: func(f *fixture) {
			w := work(t, "m1", metav1.ConditionTrue, "", nil)
			f.c.onWorkUpdate(w, w.DeepCopy())
		},
	}, {
		name: "Work moved to another binding enqueues both",
		events: func(f *fixture) {
			w := work(t, "m1", metav1.ConditionTrue, "", nil)
			f.c.onWorkUpdate(w, moved(w))
		},
		want: []string{rbKey("default", "other-deployment"), nginx},
	}, {
		name:   "Work of a cluster binding",
		events: func(f *fixture) { f.c.onWork(widgetWork(t, "m1")) },
		want:   []string{crbKey("gear-widget")},
	}, {
		name: "Work of no binding",
		events: func(f *fixture) {
			f.c.onWork(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-m1", Name: "x"}})
		},
	}, {
		name:   "binding added",
		events: func(f *fixture) { f.c.onBinding(crb("m1")) },
		want:   []string{crbKey("gear-widget")},
	}, {
		name:   "binding rescheduled",
		events: func(f *fixture) { f.c.onBindingUpdate(rb("m1", "m2"), rescheduled) },
		want:   []string{nginx},
	}, {
		name:   "FullyApplied removed by another writer",
		events: func(f *fixture) { f.c.onBindingUpdate(withFullyApplied, statusWiped) },
		want:   []string{nginx},
	}, {
		name:   "binding update touching nothing aggregated",
		events: func(f *fixture) { f.c.onBindingUpdate(rb("m1", "m2"), resynced) },
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, nil)
			tc.events(f)
			got := drain(f)
			slices.Sort(got)
			tc.want = slices.Sorted(slices.Values(tc.want))
			if len(got) != len(tc.want) {
				t.Fatalf("queued %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("queued %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func TestWorkIndex(t *testing.T) {
	t.Parallel()
	stale := work(t, "m2", metav1.ConditionTrue, "", nil)
	stale.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] = "old-id"
	f := newFixture(t, nil, []runtime.Object{work(t, "m1", metav1.ConditionTrue, "", nil), stale, widgetWork(t, "m1")})
	byID, err := f.c.workIdx.ByIndex(workBindingIndex, worksIndexValue(&binding{meta: &rb().ObjectMeta,
		idLabel: workv1alpha2.ResourceBindingPermanentIDLabel, key: rbKey("default", "nginx-deployment")}))
	if err != nil || len(byID) != 1 {
		t.Errorf("Works by permanent id: %d (%v), want only the current one", len(byID), err)
	}
	unlabelled := rb()
	unlabelled.Labels = nil
	byName, err := f.c.workIdx.ByIndex(workBindingIndex, worksIndexValue(&binding{meta: &unlabelled.ObjectMeta,
		idLabel: workv1alpha2.ResourceBindingPermanentIDLabel, key: rbKey("default", "nginx-deployment")}))
	if err != nil || len(byName) != 2 {
		t.Errorf("Works by name: %d (%v), want both", len(byName), err)
	}
}
