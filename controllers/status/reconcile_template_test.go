package status

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/interpreter"
)

// TestTemplateStatusOfDeployment checks the template status aggregated from
// two clusters and the patch sent for the binding.
func TestTemplateStatusOfDeployment(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, []runtime.Object{rb("m1", "m2"),
		work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 1)), work(t, "m2", metav1.ConditionTrue, "", deploymentStatus(t, 3, 3))},
		deployment(1))
	_, ctx := ktesting.NewTestContext(t)
	if err := f.c.reconcile(ctx, rbKey("default", "nginx-deployment")); err != nil {
		t.Fatal(err)
	}
	var writes []clienttesting.PatchAction
	for _, a := range f.host.Actions() {
		if u, ok := a.(clienttesting.PatchAction); ok {
			writes = append(writes, u)
		}
	}
	if len(writes) != 1 || writes[0].GetSubresource() != "status" {
		t.Fatalf("template writes %+v, want one through /status", writes)
	}
	got, err := f.host.Resource(deploymentGVR).Namespace("default").Get(ctx, "nginx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]int64{"replicas": 5, "readyReplicas": 4, "updatedReplicas": 5, "availableReplicas": 4, "observedGeneration": 1} {
		if v, _, _ := unstructured.NestedInt64(got.Object, "status", field); v != want {
			t.Errorf("status.%s = %d, want %d", field, v, want)
		}
	}

	f.refresh(t, rbKey("default", "nginx-deployment"))
	st := f.storedStatus(t, rbKey("default", "nginx-deployment"))
	if n := len(st.Conditions); n != 2 {
		t.Fatalf("conditions %+v, want Scheduled and FullyApplied", st.Conditions)
	}
	cond := meta.FindStatusCondition(st.Conditions, workv1alpha2.FullyApplied)
	if cond.Reason != workv1alpha2.FullyAppliedSuccessReason || cond.Message != fullyAppliedSuccessMessage || !cond.LastTransitionTime.Time.Equal(fixedNow) {
		t.Errorf("FullyApplied %+v", cond)
	}
	if st.AggregatedStatus[0].ClusterName != "m1" || st.AggregatedStatus[1].ClusterName != "m2" || !rawEqual(st.AggregatedStatus[1].Status, deploymentStatus(t, 3, 3)) {
		t.Errorf("aggregated status %+v", st.AggregatedStatus)
	}
}

// hookedInterpreter aggregates every kind by copying the first item's
// status to the template.
type hookedInterpreter struct{ interpreter.Interpreter }

func (hookedInterpreter) HookEnabled(schema.GroupVersionKind, interpreter.Operation) bool {
	return true
}

func (hookedInterpreter) AggregateStatus(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var status map[string]any
	if err := json.Unmarshal(items[0].Status.Raw, &status); err != nil {
		return nil, err
	}
	out := obj.DeepCopy()
	out.Object["status"] = status
	return out, nil
}

// TestTemplateWithoutStatusSubresource writes through the main resource
// when /status answers 404, and records a failure on the template when the
// write fails.
func TestTemplateWithoutStatusSubresource(t *testing.T) {
	t.Parallel()
	f := newFixture(t, hookedInterpreter{}, []runtime.Object{crb("m1"), widgetWork(t, "m1")}, widget())
	f.host.PrependReactor("patch", "widgets", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			return true, nil, apierrors.NewNotFound(widgetGVR.GroupResource(), "gear")
		}
		return false, nil, nil
	})
	_, ctx := ktesting.NewTestContext(t)
	if err := f.c.reconcile(ctx, crbKey("gear-widget")); err != nil {
		t.Fatal(err)
	}
	if n := f.templateWrites(); n != 2 {
		t.Errorf("%d template writes, want /status then the main resource", n)
	}
	got, err := f.host.Resource(widgetGVR).Get(ctx, "gear", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Spinning" {
		t.Errorf("status.phase %q, want Spinning", phase)
	}
	f.events()
	f.refresh(t, crbKey("gear-widget"))

	// A failing write is retried and recorded on the template.
	f.host.PrependReactor("patch", "widgets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(widgetGVR.GroupResource(), "gear", errors.New("denied"))
	})
	_ = unstructured.SetNestedField(got.Object, "Stopped", "status", "phase")
	if err := f.host.Tracker().Update(widgetGVR, got, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.c.reconcile(ctx, crbKey("gear-widget")); err == nil {
		t.Fatal("reconcile succeeded, want the write error")
	}
	events := f.events()
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning "+EventReasonAggregateStatusFailed) {
		t.Errorf("events %q, want one AggregateStatusFailed", events)
	}
}

// mapCache is a template cache over a map; kinds absent answer
// templates.ErrNotWatched.
type mapCache map[schema.GroupVersionKind]map[string]*unstructured.Unstructured

func (m mapCache) Get(_ context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	objs, ok := m[gvk]
	if !ok {
		return nil, templates.ErrNotWatched
	}
	if obj, ok := objs[namespace+"/"+name]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(deploymentGVR.GroupResource(), name)
}

// TestTemplateFromCache reads a template of a watched kind from the cache,
// never from the host, and one of an unwatched kind from the host.
func TestTemplateFromCache(t *testing.T) {
	t.Parallel()
	objs := []runtime.Object{rb("m1"), work(t, "m1", metav1.ConditionTrue, "", deploymentStatus(t, 2, 2))}
	for _, watched := range []bool{true, false} {
		f := newFixture(t, nil, objs, deployment(1))
		cache := mapCache{}
		if watched {
			cache[deploymentGVK] = map[string]*unstructured.Unstructured{"default/nginx": deployment(1)}
		}
		f.c.SetTemplateCache(cache)
		_, ctx := ktesting.NewTestContext(t)
		if err := f.c.reconcile(ctx, rbKey("default", "nginx-deployment")); err != nil {
			t.Fatal(err)
		}
		gets := 0
		for _, a := range f.host.Actions() {
			if a.GetVerb() == "get" {
				gets++
			}
		}
		if want := map[bool]int{true: 0, false: 1}[watched]; gets != want {
			t.Errorf("watched %v: %d GETs of the template from the host, want %d", watched, gets, want)
		}
		if f.templateWrites() != 1 {
			t.Errorf("watched %v: %d template writes, want 1", watched, f.templateWrites())
		}
	}
}
