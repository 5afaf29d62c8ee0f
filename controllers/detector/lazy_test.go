package detector

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/member"
)

func TestChangedByKarmada(t *testing.T) {
	t.Parallel()
	base := func() *unstructured.Unstructured {
		u := deployment("web", map[string]string{"app": "web"})
		u.SetResourceVersion("1")
		u.SetGeneration(1)
		_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "replicas")
		return u
	}
	tests := []struct {
		name   string
		change func(u *unstructured.Unstructured)
		want   bool
	}{
		{"the claim", func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"app": "web", policyv1alpha1.PropagationPolicyPermanentIDLabel: "id"})
			u.SetAnnotations(map[string]string{policyv1alpha1.PropagationPolicyNameAnnotation: "p", policyv1alpha1.PropagationPolicyNamespaceAnnotation: "default"})
		}, true},
		{"status and resourceVersion", func(u *unstructured.Unstructured) {
			u.SetResourceVersion("2")
			_ = unstructured.SetNestedField(u.Object, int64(2), "status", "replicas")
		}, true},
		{"the spec", func(u *unstructured.Unstructured) {
			u.SetGeneration(2)
			_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas")
		}, false},
		{"a user label", func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"app": "web", "tier": "front"})
		}, false},
		{"a user annotation", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"note": "x"})
		}, false},
		{"the skip-auto-propagation label is the user's", func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"app": "web", policyv1alpha1.NamespaceSkipAutoPropagationLabel: "true"})
		}, false},
		{"finalizers", func(u *unstructured.Unstructured) {
			u.SetFinalizers([]string{"example.com/x"})
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old, obj := base(), base()
			tc.change(obj)
			if got := changedByKarmada(old, obj); got != tc.want {
				t.Errorf("changedByKarmada = %v, want %v", got, tc.want)
			}
		})
	}
}

var (
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// harness is the detector over fake clients: the host's templates and
// Flotilla's API. Tests call reconcileTemplate themselves; the template
// events arrive as in production, through the templates informers.
type harness struct {
	t       *testing.T
	ctx     context.Context
	dyn     *dynamicfake.FakeDynamicClient
	karmada *karmadafake.Clientset
	c       *Controller
	events  *record.FakeRecorder
	seen    *seenHandler
}

// seenHandler records the resourceVersion of the last event of each
// template.
type seenHandler struct{ rv sync.Map }

func (s *seenHandler) OnTemplate(_ schema.GroupVersionKind, _, obj *member.Compact, _ bool) {
	s.rv.Store(obj.GetName(), obj.GetResourceVersion())
}

func newHarness(t *testing.T, objs []runtime.Object, karmadaObjs ...runtime.Object) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{deploymentGVR: "DeploymentList"}, objs...)
	versionWrites(dyn)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(deploymentGVK, meta.RESTScopeNamespace)
	tmpl := templates.New(dyn, resettable{mapper})
	karmada := karmadafake.NewSimpleClientset(karmadaObjs...)
	factory := externalversions.NewSharedInformerFactory(karmada, 0)
	kube := informers.NewSharedInformerFactory(k8sfake.NewClientset(), 0)
	p, w := factory.Policy().V1alpha1(), factory.Work().V1alpha2()
	events := record.NewFakeRecorder(100)
	c, err := New(tmpl, p.PropagationPolicies(), p.ClusterPropagationPolicies(), p.OverridePolicies(), w.ResourceBindings(),
		w.ClusterResourceBindings(), kube.Scheduling().V1().PriorityClasses(), karmada, nil, events)
	if err != nil {
		t.Fatal(err)
	}
	// Called after the detector, event by event.
	seen := &seenHandler{}
	tmpl.AddHandler(seen)
	factory.Start(ctx.Done())
	kube.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	kube.WaitForCacheSync(ctx.Done())
	if missing := tmpl.Ensure(ctx, map[schema.GroupVersionKind]bool{deploymentGVK: true}); len(missing) > 0 {
		t.Fatalf("not watched: %v", missing)
	}
	h := &harness{t: t, ctx: ctx, dyn: dyn, karmada: karmada, c: c, events: events, seen: seen}
	h.poll("the templates informer to sync", func() bool { return tmpl.Synced(deploymentGVK) })
	return h
}

// versionWrites makes the fake API server give each write of a template a
// new resourceVersion, as a real one does (the detector ignores updates
// that keep it).
func versionWrites(dyn *dynamicfake.FakeDynamicClient) {
	var rv atomic.Int64
	bump := func(u *unstructured.Unstructured) { u.SetResourceVersion(strconv.FormatInt(rv.Add(1), 10)) }
	for _, verb := range []string{"create", "update"} {
		dyn.PrependReactor(verb, "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
			if o, ok := a.(interface{ GetObject() runtime.Object }); ok {
				if u, ok := o.GetObject().(*unstructured.Unstructured); ok {
					bump(u)
				}
			}
			return false, nil, nil
		})
	}
	dyn.PrependReactor("patch", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		pa := a.(clienttesting.PatchAction)
		cur, err := dyn.Tracker().Get(deploymentGVR, pa.GetNamespace(), pa.GetName())
		if err != nil {
			return true, nil, err
		}
		js, err := cur.(*unstructured.Unstructured).MarshalJSON()
		if err != nil {
			return true, nil, err
		}
		merged, err := jsonpatch.MergePatch(js, pa.GetPatch())
		if err != nil {
			return true, nil, err
		}
		out := &unstructured.Unstructured{}
		if err := out.UnmarshalJSON(merged); err != nil {
			return true, nil, err
		}
		bump(out)
		return true, out, dyn.Tracker().Update(deploymentGVR, out, pa.GetNamespace())
	})
}

func (h *harness) poll(what string, cond func() bool) {
	h.t.Helper()
	if err := wait.PollUntilContextTimeout(h.ctx, 5*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// settle waits until the detector has handled the event of the template's
// last write, then empties its queue: the tests reconcile.
func (h *harness) settle(name string) {
	h.t.Helper()
	rv := h.template(name).GetResourceVersion()
	h.poll("the event of "+name+" at "+rv, func() bool {
		got, _ := h.seen.rv.Load(name)
		return got == rv
	})
	for h.c.queue.Len() > 0 {
		k, _ := h.c.queue.Get()
		h.c.queue.Done(k)
		h.c.queue.Forget(k)
	}
}

func (h *harness) reconcile(name string) {
	h.t.Helper()
	if err := h.c.reconcileTemplate(h.ctx, templateKey(deploymentGVK, "default", name)); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) template(name string) *unstructured.Unstructured {
	h.t.Helper()
	u, err := h.dyn.Resource(deploymentGVR).Namespace("default").Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return u
}

// write writes a template as its user does and waits for the event.
func (h *harness) write(u *unstructured.Unstructured, create bool) {
	h.t.Helper()
	var err error
	if create {
		_, err = h.dyn.Resource(deploymentGVR).Namespace("default").Create(h.ctx, u, metav1.CreateOptions{})
	} else {
		_, err = h.dyn.Resource(deploymentGVR).Namespace("default").Update(h.ctx, u, metav1.UpdateOptions{})
	}
	if err != nil {
		h.t.Fatal(err)
	}
	h.settle(u.GetName())
}

// binding returns the template's binding, nil when there is none; it waits
// for the binding lister to agree with the API.
func (h *harness) binding(name string) *workv1alpha2.ResourceBinding {
	h.t.Helper()
	bn := "web-deployment"
	if name != "web" {
		bn = name + "-deployment"
	}
	rb, err := h.karmada.WorkV1alpha2().ResourceBindings("default").Get(h.ctx, bn, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		h.t.Fatal(err)
	}
	h.poll("the binding lister", func() bool {
		cached, err := h.c.rbs.ResourceBindings("default").Get(bn)
		return err == nil && cached.ResourceVersion == rb.ResourceVersion
	})
	return rb
}

func (h *harness) drainEvents() []string {
	var out []string
	for {
		select {
		case e := <-h.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func testPP(name string, lazy bool, prio int32, cluster string) *policyv1alpha1.PropagationPolicy {
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			Labels: map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: name + "-id"}},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}}},
			Priority:          ptr.To(prio),
			Preemption:        policyv1alpha1.PreemptAlways,
		},
	}
	if lazy {
		pp.Spec.ActivationPreference = policyv1alpha1.LazyActivation
	}
	return pp
}

func templateObj(name string, lbls map[string]string) *unstructured.Unstructured {
	u := deployment(name, lbls)
	u.SetGeneration(1)
	_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "replicas")
	return u
}

func placedOn(rb *workv1alpha2.ResourceBinding) []string {
	if rb == nil || rb.Spec.Placement == nil || rb.Spec.Placement.ClusterAffinity == nil {
		return nil
	}
	return rb.Spec.Placement.ClusterAffinity.ClusterNames
}

// A Lazy policy that first matches an existing template claims it and
// creates no binding, not even after its own claim is written, until the
// template's user changes it.
func TestLazyFirstMatchWaitsForChange(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []runtime.Object{templateObj("web", map[string]string{"app": "web"})}, testPP("lazy", true, 0, "member1"))
	h.reconcile("web")
	if got := h.template("web").GetLabels()[policyv1alpha1.PropagationPolicyPermanentIDLabel]; got != "lazy-id" {
		t.Fatalf("template not claimed: claim label %q", got)
	}
	if rb := h.binding("web"); rb != nil {
		t.Fatalf("binding created at the first match: %+v", rb.Spec)
	}
	h.settle("web") // the claim's own update event
	h.reconcile("web")
	if rb := h.binding("web"); rb != nil {
		t.Fatal("binding created after the claim, a change by Flotilla")
	}
	if ev := h.drainEvents(); slices.ContainsFunc(ev, func(e string) bool { return strings.Contains(e, EventReasonApplyPolicySucceed) }) {
		t.Errorf("events %v", ev)
	}
	u := h.template("web")
	u.SetLabels(map[string]string{"app": "web", "tier": "front", policyv1alpha1.PropagationPolicyPermanentIDLabel: "lazy-id"})
	h.write(u, false)
	h.reconcile("web")
	if rb := h.binding("web"); !slices.Equal(placedOn(rb), []string{"member1"}) {
		t.Fatalf("after the template changed, binding placed on %v", placedOn(rb))
	}
}

// A template created after the Lazy policy is a change: its binding is
// created at once.
func TestLazyNewTemplateBindsAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []runtime.Object{templateObj("other", nil)}, testPP("lazy", true, 0, "member1"))
	h.write(templateObj("web", map[string]string{"app": "web"}), true)
	h.reconcile("web")
	if rb := h.binding("web"); !slices.Equal(placedOn(rb), []string{"member1"}) {
		t.Fatalf("binding of a new template placed on %v", placedOn(rb))
	}
}

// A Lazy policy that preempts another takes the claim at once (template and
// binding metadata); the binding keeps its placement until the template
// changes. An immediate preemptor rewrites the binding at once.
func TestLazyPreemptionKeepsBinding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		lazy        bool
		wantAtOnce  []string
		wantChanged []string
	}{
		{"lazy", true, []string{"member1"}, []string{"member2"}},
		{"immediate", false, []string{"member2"}, []string{"member2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			claimed := templateObj("web", map[string]string{"app": "web", policyv1alpha1.PropagationPolicyPermanentIDLabel: "low-id"})
			claimed.SetAnnotations(map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "default",
				policyv1alpha1.PropagationPolicyNameAnnotation: "low"})
			low := testPP("low", false, 1, "member1")
			h := newHarness(t, []runtime.Object{claimed}, low)
			h.reconcile("web") // low's binding
			if rb := h.binding("web"); !slices.Equal(placedOn(rb), []string{"member1"}) {
				t.Fatalf("low's binding placed on %v", placedOn(rb))
			}
			high := testPP("high", tc.lazy, 5, "member2")
			if _, err := h.karmada.PolicyV1alpha1().PropagationPolicies("default").Create(h.ctx, high, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			h.poll("the policy lister", func() bool { _, err := h.c.pps.PropagationPolicies("default").Get("high"); return err == nil })
			h.drainEvents()
			h.reconcile("web")
			if got := h.template("web").GetLabels()[policyv1alpha1.PropagationPolicyPermanentIDLabel]; got != "high-id" {
				t.Fatalf("template claim %q, want high-id", got)
			}
			if ev := h.drainEvents(); !slices.Contains(ev, "Normal PreemptPolicySucceed Propagation policy(default/high) preempted propagation policy(default/low) successfully") {
				t.Errorf("events %v", ev)
			}
			rb := h.binding("web")
			if !slices.Equal(placedOn(rb), tc.wantAtOnce) || rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != "high-id" ||
				rb.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] != "high" {
				t.Fatalf("after the preemption: binding placed on %v, labels %v, annotations %v", placedOn(rb), rb.Labels, rb.Annotations)
			}
			h.settle("web")
			h.reconcile("web")
			if rb := h.binding("web"); !slices.Equal(placedOn(rb), tc.wantAtOnce) {
				t.Fatalf("after the claim's own event: binding placed on %v", placedOn(rb))
			}
			u := h.template("web")
			_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "replicas")
			u.SetGeneration(2)
			h.write(u, false)
			h.reconcile("web")
			if rb := h.binding("web"); !slices.Equal(placedOn(rb), tc.wantChanged) {
				t.Fatalf("after the template changed: binding placed on %v", placedOn(rb))
			}
		})
	}
}
