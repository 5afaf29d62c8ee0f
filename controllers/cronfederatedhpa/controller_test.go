package cronfederatedhpa

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakescale "k8s.io/client-go/scale/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
)

// harness is a controller over a fake clientset, a fake host scale
// subresource (one Deployment ns/web) and a settable clock.
type harness struct {
	c        *Controller
	client   *fake.Clientset
	indexer  cache.Indexer
	recorder *record.FakeRecorder
	clock    *fakeClock
	replicas atomic.Int32 // of ns/web
	scaleErr error        // returned by scale reads when set
	updates  atomic.Int32 // scale writes
}

func newHarness(t *testing.T, objects ...runtime.Object) *harness {
	t.Helper()
	h := &harness{client: fake.NewSimpleClientset(objects...), recorder: record.NewFakeRecorder(100),
		clock: &fakeClock{t: time.Date(2025, 6, 1, 7, 59, 30, 0, time.UTC)}}
	scales := &fakescale.FakeScaleClient{}
	scales.AddReactor("get", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if h.scaleErr != nil {
			return true, nil, h.scaleErr
		}
		name := a.(clienttesting.GetAction).GetName()
		if name != "web" {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, name)
		}
		return true, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: autoscalingv1.ScaleSpec{Replicas: h.replicas.Load()}}, nil
	})
	scales.AddReactor("update", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		s := a.(clienttesting.UpdateAction).GetObject().(*autoscalingv1.Scale)
		h.replicas.Store(s.Spec.Replicas)
		h.updates.Add(1)
		return true, s, nil
	})
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	inf := externalversions.NewSharedInformerFactory(h.client, 0).Autoscaling().V1alpha1().CronFederatedHPAs()
	c, err := New(inf, h.client, scales, mapper, h.recorder, h.clock.now)
	if err != nil {
		t.Fatal(err)
	}
	c.planner.local = time.UTC
	h.c, h.indexer = c, inf.Informer().GetIndexer()
	for _, o := range objects {
		if cron, ok := o.(*autoscalingv1alpha1.CronFederatedHPA); ok {
			if err := h.indexer.Add(cron); err != nil {
				t.Fatal(err)
			}
		}
	}
	return h
}

// sync copies the stored CronFederatedHPA into the cache, as its informer would.
func (h *harness) sync(t *testing.T) *autoscalingv1alpha1.CronFederatedHPA {
	t.Helper()
	cron, err := h.client.AutoscalingV1alpha1().CronFederatedHPAs("ns").Get(context.Background(), "cron", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.indexer.Update(cron); err != nil {
		t.Fatal(err)
	}
	return cron
}

// fireAt moves the clock to t, fires the planner and checks the key was queued.
func (h *harness) fireAt(t *testing.T, at time.Time) {
	t.Helper()
	h.clock.set(at)
	h.c.planner.fire(at)
	if h.c.queue.Len() != 1 {
		t.Fatalf("queue length %d after firing, want 1", h.c.queue.Len())
	}
	key, _ := h.c.queue.Get()
	h.c.queue.Done(key)
	if key != "ns/cron" {
		t.Fatalf("queued %q", key)
	}
}

func (h *harness) reconcile(t *testing.T) error {
	t.Helper()
	h.client.ClearActions()
	return h.c.reconcile(context.Background(), "ns/cron")
}

// statusPatches counts the patches of the status subresource since the last reconcile.
func (h *harness) statusPatches() int {
	n := 0
	for _, a := range h.client.Actions() {
		if a.GetVerb() == "patch" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func utc(hour, minute int) *metav1.Time {
	t := metav1.NewTime(time.Date(2025, 6, 1, hour, minute, 0, 0, time.UTC))
	return &t
}

func workloadCron() *autoscalingv1alpha1.CronFederatedHPA {
	cron := cronFor("apps/v1", "Deployment", "web")
	cron.Name, cron.UID, cron.Generation, cron.ResourceVersion = "cron", "uid-1", 1, "1"
	up, down := rule("up", "0 8 * * *"), rule("down", "0 20 * * *")
	up.TargetReplicas, down.TargetReplicas = ptr.To[int32](5), ptr.To[int32](1)
	cron.Spec.Rules = []autoscalingv1alpha1.CronFederatedHPARule{up, down}
	cron.Status.ExecutionHistories = []autoscalingv1alpha1.ExecutionHistory{{RuleName: "removed", NextExecutionTime: utc(9, 0)}}
	return cron
}

func TestScaleWorkload(t *testing.T) {
	t.Parallel()
	h := newHarness(t, workloadCron())
	h.replicas.Store(2)

	// Planning writes the next times once, and drops the removed rule.
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if n := h.statusPatches(); n != 1 {
		t.Errorf("%d status patches when planning, want 1", n)
	}
	want := []autoscalingv1alpha1.ExecutionHistory{{RuleName: "up", NextExecutionTime: utc(8, 0)}, {RuleName: "down", NextExecutionTime: utc(20, 0)}}
	if diff := cmp.Diff(want, h.sync(t).Status.ExecutionHistories); diff != "" {
		t.Errorf("histories after planning (-want +got):\n%s", diff)
	}
	// Nothing changed: nothing written.
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if n := h.statusPatches(); n != 0 {
		t.Errorf("%d status patches with nothing new, want 0", n)
	}

	// 08:00:01: "up" runs; one status write records it and the next time.
	h.fireAt(t, utc(8, 0).Add(time.Second))
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := h.replicas.Load(); got != 5 {
		t.Errorf("replicas = %d, want 5", got)
	}
	if n := h.statusPatches(); n != 1 {
		t.Errorf("%d status patches for one execution, want 1", n)
	}
	tomorrow := metav1.NewTime(utc(8, 0).AddDate(0, 0, 1))
	want[0] = autoscalingv1alpha1.ExecutionHistory{RuleName: "up", NextExecutionTime: &tomorrow,
		SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{{ScheduleTime: utc(8, 0),
			ExecutionTime: &metav1.Time{Time: utc(8, 0).Add(time.Second)}, AppliedReplicas: ptr.To[int32](5)}}}
	if diff := cmp.Diff(want, h.sync(t).Status.ExecutionHistories); diff != "" {
		t.Errorf("histories after the execution (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Normal ScaleSucceed Rule up set replicas to 5 of Deployment ns/web"}, h.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, a := range h.client.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && !strings.Contains(string(p.GetPatch()), `"resourceVersion":"`) {
			t.Errorf("status patch without a resourceVersion precondition: %s", p.GetPatch())
		}
	}

	// The rule is suspended before 20:00: no next time, no execution.
	cron := h.sync(t).DeepCopy()
	cron.Spec.Rules[1].Suspend, cron.Generation = ptr.To(true), 2
	if err := h.indexer.Update(cron); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.AutoscalingV1alpha1().CronFederatedHPAs("ns").Update(context.Background(), cron, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := h.sync(t).Status.ExecutionHistories[1]; got.NextExecutionTime != nil {
		t.Errorf("suspended rule still has a next time: %v", got.NextExecutionTime)
	}
	h.clock.set(utc(20, 0).Time)
	h.c.planner.fire(utc(20, 0).Time)
	if h.c.queue.Len() != 0 {
		t.Error("a suspended rule came due")
	}

	// Deleted: the plans go.
	if err := h.indexer.Delete(cron); err != nil {
		t.Fatal(err)
	}
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if len(h.c.planner.objects) != 0 || len(h.c.planner.queue) != 0 {
		t.Errorf("plans left after deletion: %d objects, %d plans", len(h.c.planner.objects), len(h.c.planner.queue))
	}
}

func TestScaleFederatedHPA(t *testing.T) {
	t.Parallel()
	fhpa := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "fhpa"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To[int32](1), MaxReplicas: 5}}
	cron := cronFor("autoscaling.karmada.io/v1alpha1", "FederatedHPA", "fhpa")
	cron.Name, cron.UID, cron.ResourceVersion = "cron", "uid-1", "1"
	cron.Spec.Rules = []autoscalingv1alpha1.CronFederatedHPARule{{Name: "peak", Schedule: "30 7 * * *", TimeZone: ptr.To("Asia/Tokyo"),
		TargetMinReplicas: ptr.To[int32](3), TargetMaxReplicas: ptr.To[int32](10)}}
	h := newHarness(t, cron, fhpa)
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	// 07:30 in Tokyo is 22:30 UTC the day before; the next one is on June 1st at 22:30 UTC.
	next := h.sync(t).Status.ExecutionHistories[0].NextExecutionTime
	if want := time.Date(2025, 6, 1, 22, 30, 0, 0, time.UTC); next == nil || !next.Equal(&metav1.Time{Time: want}) {
		t.Fatalf("next execution %v, want %v", next, want)
	}

	h.fireAt(t, next.Time)
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	got, err := h.client.AutoscalingV1alpha1().FederatedHPAs("ns").Get(context.Background(), "fhpa", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.MinReplicas != 3 || got.Spec.MaxReplicas != 10 {
		t.Errorf("FederatedHPA bounds %d..%d, want 3..10", *got.Spec.MinReplicas, got.Spec.MaxReplicas)
	}
	hs := h.sync(t).Status.ExecutionHistories[0]
	if len(hs.SuccessfulExecutions) != 1 || *hs.SuccessfulExecutions[0].AppliedMinReplicas != 3 || *hs.SuccessfulExecutions[0].AppliedMaxReplicas != 10 ||
		hs.SuccessfulExecutions[0].AppliedReplicas != nil {
		t.Errorf("successful executions %+v", hs.SuccessfulExecutions)
	}
	if diff := cmp.Diff([]string{"Normal ScaleSucceed Rule peak set minReplicas to 3, maxReplicas to 10 of FederatedHPA ns/fhpa"}, h.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestFailedExecution(t *testing.T) {
	t.Parallel()
	h := newHarness(t, workloadCron())
	h.scaleErr = apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web")
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	h.sync(t)
	h.fireAt(t, utc(8, 0).Time)
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	hs := h.sync(t).Status.ExecutionHistories[0]
	want := []autoscalingv1alpha1.FailedExecution{{ScheduleTime: utc(8, 0), ExecutionTime: utc(8, 0), Message: `deployments.apps "web" not found`}}
	if diff := cmp.Diff(want, hs.FailedExecutions); diff != "" || hs.SuccessfulExecutions != nil {
		t.Errorf("failed executions (-want +got):\n%s\nsuccessful: %v", diff, hs.SuccessfulExecutions)
	}
	if diff := cmp.Diff([]string{`Warning ScaleFailed Rule up failed to scale Deployment ns/web: deployments.apps "web" not found`}, h.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestStatusWriteRetried checks that an execution whose status write failed
// is recorded at the retry without scaling again.
func TestStatusWriteRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, workloadCron())
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	h.sync(t)
	var fail atomic.Bool
	fail.Store(true)
	h.client.PrependReactor("patch", "cronfederatedhpas", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if fail.Load() {
			return true, nil, apierrors.NewServiceUnavailable("etcd is away")
		}
		return false, nil, nil
	})
	h.fireAt(t, utc(8, 0).Time)
	if err := h.reconcile(t); err == nil {
		t.Fatal("reconcile succeeded though the status write failed")
	}
	if diff := cmp.Diff([]string{"Normal ScaleSucceed Rule up set replicas to 5 of Deployment ns/web", "Warning UpdateStatusFailed etcd is away"}, h.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	fail.Store(false)
	h.replicas.Store(0) // changed by someone else since: not scaled again
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if h.updates.Load() != 1 || h.replicas.Load() != 0 {
		t.Errorf("scaled %d times (replicas %d), want once", h.updates.Load(), h.replicas.Load())
	}
	if got := h.sync(t).Status.ExecutionHistories[0].SuccessfulExecutions; len(got) != 1 {
		t.Errorf("successful executions %v, want the one recorded late", got)
	}
	if got := h.c.planner.unrecorded("ns/cron"); got != nil {
		t.Errorf("outcomes still waiting: %v", got)
	}
}

// TestStatusConflict checks that a status computed from a stale cache is
// computed again from a fresh read rather than overwriting newer records.
func TestStatusConflict(t *testing.T) {
	t.Parallel()
	h := newHarness(t, workloadCron())
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	// The stored object has a record the cache has not seen yet.
	stored := h.sync(t).DeepCopy()
	stored.ResourceVersion = "2"
	stored.Status.ExecutionHistories[1].FailedExecutions = []autoscalingv1alpha1.FailedExecution{{ScheduleTime: utc(7, 0), ExecutionTime: utc(7, 0), Message: "earlier"}}
	if _, err := h.client.AutoscalingV1alpha1().CronFederatedHPAs("ns").UpdateStatus(context.Background(), stored, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	conflicts := 0
	h.client.PrependReactor("patch", "cronfederatedhpas", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if !strings.Contains(string(a.(clienttesting.PatchAction).GetPatch()), `"resourceVersion":"2"`) {
			conflicts++
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "autoscaling.karmada.io", Resource: "cronfederatedhpas"}, "cron", errors.New("stale"))
		}
		return false, nil, nil
	})
	h.fireAt(t, utc(8, 0).Time)
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if conflicts != 1 {
		t.Errorf("%d conflicts, want 1", conflicts)
	}
	hs := h.sync(t).Status.ExecutionHistories
	if len(hs[0].SuccessfulExecutions) != 1 || len(hs[1].FailedExecutions) != 1 {
		t.Errorf("histories %+v: want the new success and the earlier failure", hs)
	}
}

func TestNewRequiresClients(t *testing.T) {
	t.Parallel()
	inf := externalversions.NewSharedInformerFactory(fake.NewSimpleClientset(), 0).Autoscaling().V1alpha1().CronFederatedHPAs()
	if _, err := New(inf, nil, nil, nil, nil, nil); err == nil {
		t.Error("New accepted nil clients")
	}
}
