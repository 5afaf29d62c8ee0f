package status

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// refresh copies the stored binding into the lister, as the informer would.
func (f *fixture) refresh(t *testing.T, key string) {
	t.Helper()
	ctx := context.Background()
	var err error
	ns, name, cluster, _ := names.ParseBindingKey(key)
	switch {
	case !cluster:
		var b *workv1alpha2.ResourceBinding
		if b, err = f.karmada.WorkV1alpha2().ResourceBindings(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			err = f.factory.Work().V1alpha2().ResourceBindings().Informer().GetIndexer().Update(b)
		}
	default:
		var b *workv1alpha2.ClusterResourceBinding
		if b, err = f.karmada.WorkV1alpha2().ClusterResourceBindings().Get(ctx, name, metav1.GetOptions{}); err == nil {
			err = f.factory.Work().V1alpha2().ClusterResourceBindings().Informer().GetIndexer().Update(b)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// storedStatus returns the stored status of a binding key.
func (f *fixture) storedStatus(t *testing.T, key string) workv1alpha2.ResourceBindingStatus {
	t.Helper()
	b, err := f.c.getBinding(key)
	if err != nil {
		t.Fatal(err)
	}
	return *b.status
}

func crb(clusters ...string) *workv1alpha2.ClusterResourceBinding {
	b := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gear-widget", ResourceVersion: "5",
			Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb-id"}},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "example.io/v1", Kind: "Widget", Name: "gear"}},
	}
	for _, c := range clusters {
		b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha2.TargetCluster{Name: c})
	}
	return b
}

func widget() *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(widgetGVK)
	obj.SetName("gear")
	obj.SetResourceVersion("9")
	return obj
}

func widgetWork(t *testing.T, cluster string) *workv1alpha1.Work {
	t.Helper()
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionNamespacePrefix + cluster, Name: "gear-x",
			Labels:      map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb-id"},
			Annotations: map[string]string{workv1alpha2.ClusterResourceBindingAnnotationKey: "gear-widget"}},
		Status: workv1alpha1.WorkStatus{
			Conditions: []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, Reason: "r"}},
			ManifestStatuses: []workv1alpha1.ManifestStatus{{
				Identifier: workv1alpha1.ResourceIdentifier{Group: "example.io", Version: "v1", Kind: "Widget", Resource: "widgets", Name: "gear"},
				Status:     rawJSON(t, map[string]any{"phase": "Spinning"}), Health: workv1alpha1.ResourceUnknown,
			}},
		},
	}
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	current := rb("m1", "m2")
	current.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "m1", Status: deploymentStatus(t, 2, 1), Applied: true, Health: workv1alpha2.ResourceHealthy},
		{ClusterName: "m2", Status: deploymentStatus(t, 3, 3), Applied: true, Health: workv1alpha2.ResourceHealthy},
	}
	current.Status.Conditions = append(current.Status.Conditions, metav1.Condition{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue,
		Reason: workv1alpha2.FullyAppliedSuccessReason, Message: fullyAppliedSuccessMessage})
	aggregated := deployment(1)
	_ = unstructured.SetNestedMap(aggregated.Object, map[string]any{"replicas": int64(5), "readyReplicas": int64(4),
		"updatedReplicas": int64(5), "availableReplicas": int64(4), "observedGeneration": int64(1)}, "status")
	deleting := rb("m1", "m2")
	deleting.DeletionTimestamp = &metav1.Time{Time: fixedNow}
	deleting.Finalizers = []string{workv1alpha2.BindingControllerFinalizer}
	replaced := deployment(1)
	replaced.SetUID("another")

	twoApplied := func(b runtime.Object) []runtime.Object {
		return []runtime.Object{b, work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 1)), work(t, "m2", metav1.ConditionTrue, "", deploymentStatus(t, 3, 3))}
	}
	tests := []struct {
		name           string
		key            string
		objs           []runtime.Object
		template       *unstructured.Unstructured
		patches        int
		templateWrites int
		fullyApplied   metav1.ConditionStatus // "" when not checked
		items          int
	}{{
		name: "first aggregation writes binding and template once", key: rbKey("default", "nginx-deployment"),
		objs: twoApplied(rb("m1", "m2")), template: deployment(1),
		patches: 1, templateWrites: 1, fullyApplied: metav1.ConditionTrue, items: 2,
	}, {
		name: "binding current, template stale", key: rbKey("default", "nginx-deployment"),
		objs: twoApplied(current), template: deployment(1),
		patches: 0, templateWrites: 1, fullyApplied: metav1.ConditionTrue, items: 2,
	}, {
		name: "everything current writes nothing", key: rbKey("default", "nginx-deployment"),
		objs: twoApplied(current), template: aggregated,
		patches: 0, templateWrites: 0, fullyApplied: metav1.ConditionTrue, items: 2,
	}, {
		name: "apply failed in one cluster", key: rbKey("default", "nginx-deployment"),
		objs:     []runtime.Object{rb("m1", "m2"), work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 1)), work(t, "m2", metav1.ConditionFalse, "refused", nil)},
		template: deployment(1), patches: 1, templateWrites: 1, fullyApplied: metav1.ConditionFalse, items: 2,
	}, {
		name: "scheduled cluster lost: items shrink", key: rbKey("default", "nginx-deployment"),
		objs: []runtime.Object{current, work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 1))}, template: aggregated,
		patches: 1, templateWrites: 1, fullyApplied: metav1.ConditionFalse, items: 1,
	}, {
		name: "template gone", key: rbKey("default", "nginx-deployment"), objs: twoApplied(rb("m1", "m2")),
	}, {
		name: "template replaced by another object", key: rbKey("default", "nginx-deployment"), objs: twoApplied(rb("m1", "m2")), template: replaced,
	}, {
		name: "binding being deleted", key: rbKey("default", "nginx-deployment"), objs: twoApplied(deleting), template: deployment(1),
	}, {
		name: "binding gone", key: rbKey("default", "nginx-deployment"), template: deployment(1),
	}, {
		name: "cluster binding of a kind without AggregateStatus hook", key: crbKey("gear-widget"),
		objs: []runtime.Object{crb("m1"), widgetWork(t, "m1")}, template: widget(),
		patches: 1, templateWrites: 0, fullyApplied: metav1.ConditionTrue, items: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var host []runtime.Object
			if tc.template != nil {
				host = append(host, tc.template.DeepCopy())
			}
			f := newFixture(t, nil, tc.objs, host...)
			_, ctx := ktesting.NewTestContext(t)
			if err := f.c.reconcile(ctx, tc.key); err != nil {
				t.Fatal(err)
			}
			if got := f.statusPatches(); got != tc.patches {
				t.Errorf("%d binding status patches, want %d", got, tc.patches)
			}
			if got := f.templateWrites(); got != tc.templateWrites {
				t.Errorf("%d template writes, want %d", got, tc.templateWrites)
			}
			events := f.events()
			if want := 2 * tc.patches; len(events) != want {
				t.Errorf("events %q, want %d AggregateStatusSucceed", events, want)
			}
			for _, e := range events {
				if !strings.HasPrefix(e, "Normal "+EventReasonAggregateStatusSucceed+" Update ") {
					t.Errorf("unexpected event %q", e)
				}
			}
			if tc.fullyApplied != "" {
				f.refresh(t, tc.key)
				st := f.storedStatus(t, tc.key)
				cond := meta.FindStatusCondition(st.Conditions, workv1alpha2.FullyApplied)
				if cond == nil || cond.Status != tc.fullyApplied {
					t.Errorf("FullyApplied %+v, want %s", cond, tc.fullyApplied)
				}
				if len(st.AggregatedStatus) != tc.items {
					t.Errorf("%d items, want %d", len(st.AggregatedStatus), tc.items)
				}
				if _, _, cluster, _ := names.ParseBindingKey(tc.key); !cluster && meta.FindStatusCondition(st.Conditions, workv1alpha2.Scheduled) == nil {
					t.Errorf("Scheduled condition lost: %+v", st.Conditions)
				}
			}

			// A repeated reconcile over the written state writes nothing.
			f.karmada.ClearActions()
			f.host.ClearActions()
			if err := f.c.reconcile(ctx, tc.key); err != nil {
				t.Fatal(err)
			}
			if got, writes := f.statusPatches(), f.templateWrites(); got != 0 || writes != 0 {
				t.Errorf("repeated reconcile: %d binding patches and %d template writes, want none", got, writes)
			}
			if events := f.events(); len(events) != 0 {
				t.Errorf("repeated reconcile recorded %q", events)
			}
		})
	}
}

// TestWaitsForNewWorksToReport writes no status while a Work created a
// moment ago has not reported whether it was applied, and writes once it
// has, once it is old enough, or when its dispatching is suspended.
func TestWaitsForNewWorksToReport(t *testing.T) {
	t.Parallel()
	key := rbKey("default", "nginx-deployment")
	fresh := func(mutate func(*workv1alpha1.Work)) *workv1alpha1.Work {
		w := work(t, "m2", "", "", nil)
		w.Name = "nginx-m2"
		w.CreationTimestamp = metav1.NewTime(fixedNow.Add(-time.Second))
		if mutate != nil {
			mutate(w)
		}
		return w
	}
	for name, tc := range map[string]struct {
		w      *workv1alpha1.Work
		writes int
	}{
		"unreported":     {fresh(nil), 0},
		"reported":       {fresh(func(w *workv1alpha1.Work) { w.Status = work(t, "m2", metav1.ConditionTrue, "", nil).Status }), 1},
		"past the grace": {fresh(func(w *workv1alpha1.Work) { w.CreationTimestamp = metav1.NewTime(fixedNow.Add(-workReportGrace)) }), 1},
		"suspended":      {fresh(func(w *workv1alpha1.Work) { w.Spec.SuspendDispatching = ptr.To(true) }), 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, []runtime.Object{rb("m1", "m2"),
				work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 2)), tc.w}, deployment(1))
			_, ctx := ktesting.NewTestContext(t)
			if err := f.c.reconcile(ctx, key); err != nil {
				t.Fatal(err)
			}
			if got := f.statusPatches(); got != tc.writes {
				t.Errorf("%d status writes, want %d", got, tc.writes)
			}
			if tc.writes == 0 && f.c.queue.Len() != 0 {
				t.Error("the key was queued at once, not after the grace")
			}
		})
	}
}

// TestUnscheduledBindingIsLeftAlone writes nothing for a binding the
// scheduler has not decided yet, and writes FullyApplied once it has
// decided that no cluster fits.
func TestUnscheduledBindingIsLeftAlone(t *testing.T) {
	t.Parallel()
	fresh := rb()
	fresh.Status = workv1alpha2.ResourceBindingStatus{}
	f := newFixture(t, nil, []runtime.Object{fresh}, deployment(1))
	_, ctx := ktesting.NewTestContext(t)
	key := rbKey("default", "nginx-deployment")
	if err := f.c.reconcile(ctx, key); err != nil {
		t.Fatal(err)
	}
	if n := f.statusPatches(); n != 0 {
		t.Errorf("%d status writes before scheduling, want 0", n)
	}

	g := newFixture(t, nil, []runtime.Object{rb()}, deployment(1))
	if err := g.c.reconcile(ctx, key); err != nil {
		t.Fatal(err)
	}
	if n := g.statusPatches(); n != 1 {
		t.Errorf("%d status writes after a decision of no cluster, want 1", n)
	}
}

// TestWaitsForMissingWorks writes no status while a Ready cluster
// scheduled a moment ago has no Work yet, and writes once the grace has
// passed, or at once when the cluster is not Ready.
func TestWaitsForMissingWorks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		missing string // m2 is Ready, m3 is not
		age     time.Duration
		writes  int
	}{{"m2", time.Second, 0}, {"m2", workReportGrace, 1}, {"m3", time.Second, 1}} {
		b := rb("m1", tc.missing)
		b.CreationTimestamp = metav1.NewTime(fixedNow.Add(-tc.age))
		f := newFixture(t, nil, []runtime.Object{b, work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 2))}, deployment(1))
		_, ctx := ktesting.NewTestContext(t)
		if err := f.c.reconcile(ctx, rbKey("default", "nginx-deployment")); err != nil {
			t.Fatal(err)
		}
		if got := f.statusPatches(); got != tc.writes {
			t.Errorf("binding scheduled %v ago, the Work of %s missing: %d status writes, want %d", tc.age, tc.missing, got, tc.writes)
		}
	}
}

// TestAttachedBindingStatus: a binding with no placement
// whose clusters come from spec.requiredBy (a dependency's attached
// binding) gets one item per cluster and FullyApplied once every Work is
// applied; while a Work of a required cluster is missing, it waits as for
// a scheduled cluster.
func TestAttachedBindingStatus(t *testing.T) {
	t.Parallel()
	attached := func(age time.Duration) *workv1alpha2.ResourceBinding {
		b := rb()
		b.Status = workv1alpha2.ResourceBindingStatus{}
		b.CreationTimestamp = metav1.NewTime(fixedNow.Add(-age))
		b.Spec.RequiredBy = []workv1alpha2.BindingSnapshot{
			{Namespace: "default", Name: "a-deployment", Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}}},
			{Namespace: "default", Name: "b-deployment", Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}, {Name: "m2", Replicas: 1}}},
		}
		return b
	}
	m2 := func(applied metav1.ConditionStatus) *workv1alpha1.Work {
		w := work(t, "m2", applied, "", deploymentStatus(t, 2, 2))
		w.Name = "nginx-m2"
		return w
	}
	for _, tc := range []struct {
		name         string
		objs         []runtime.Object
		writes       int
		fullyApplied metav1.ConditionStatus
		applied      []bool
	}{
		{name: "every Work applied", objs: []runtime.Object{attached(time.Hour),
			work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 2)), m2(metav1.ConditionTrue)},
			writes: 1, fullyApplied: metav1.ConditionTrue, applied: []bool{true, true}},
		{name: "one Work not applied", objs: []runtime.Object{attached(time.Hour),
			work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 2)), m2(metav1.ConditionFalse)},
			writes: 1, fullyApplied: metav1.ConditionFalse, applied: []bool{true, false}},
		{name: "a Work missing a moment after", objs: []runtime.Object{attached(time.Second),
			work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 2))}},
		{name: "a Work missing past the grace", objs: []runtime.Object{attached(workReportGrace),
			work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 2))},
			writes: 1, fullyApplied: metav1.ConditionFalse, applied: []bool{true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, tc.objs, deployment(1))
			_, ctx := ktesting.NewTestContext(t)
			key := rbKey("default", "nginx-deployment")
			if err := f.c.reconcile(ctx, key); err != nil {
				t.Fatal(err)
			}
			if got := f.statusPatches(); got != tc.writes {
				t.Fatalf("%d status writes, want %d", got, tc.writes)
			}
			if tc.writes == 0 {
				return
			}
			f.refresh(t, key)
			st := f.storedStatus(t, key)
			if cond := meta.FindStatusCondition(st.Conditions, workv1alpha2.FullyApplied); cond == nil || cond.Status != tc.fullyApplied {
				t.Errorf("FullyApplied %+v, want %s", cond, tc.fullyApplied)
			}
			var applied []bool
			for _, item := range st.AggregatedStatus {
				applied = append(applied, item.Applied)
			}
			if !slices.Equal(applied, tc.applied) {
				t.Errorf("aggregatedStatus applied = %v, want %v", applied, tc.applied)
			}
		})
	}
}
