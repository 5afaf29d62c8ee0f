package templates

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/flotilla-io/flotilla/member"
)

var (
	widgetGVK      = schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}
	definitionsGVR = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
)

type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// recorder records the template events it receives, as "verb ns/name",
// and counts the definition changes.
type recorder struct {
	mu          sync.Mutex
	events      []string
	definitions int
}

func (r *recorder) OnTemplate(_ schema.GroupVersionKind, old, obj *member.Compact, deleted bool) {
	verb := "update"
	switch {
	case deleted:
		verb = "delete"
	case old == nil:
		verb = "add"
	}
	r.record(verb + " " + obj.GetNamespace() + "/" + obj.GetName())
}

func (r *recorder) OnTemplateListed(_ schema.GroupVersionKind, obj *member.Compact) {
	r.record("listed " + obj.GetNamespace() + "/" + obj.GetName())
}

func (r *recorder) OnDefinitionChanged() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.definitions++
}

func (r *recorder) record(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) seen(e string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.events, e)
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *recorder) changes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.definitions
}

// bed is Informers over a fake host that serves CRDs and Widgets.
type bed struct {
	t    *testing.T
	ctx  context.Context
	dyn  *dynamicfake.FakeDynamicClient
	tmpl *Informers
	rec  *recorder
}

func newBed(t *testing.T, objs ...runtime.Object) *bed {
	t.Helper()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		definitionsGVR: "CustomResourceDefinitionList", widgetsV1: "WidgetList", widgetsV2: "WidgetList",
	}, objs...)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), meta.RESTScopeRoot)
	tmpl := New(dyn, resettable{mapper})
	rec := &recorder{}
	tmpl.AddHandler(rec)
	return &bed{t: t, ctx: t.Context(), dyn: dyn, tmpl: tmpl, rec: rec}
}

func definitionObject(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	return u
}

func widget(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.io/v1")
	u.SetKind("Widget")
	u.SetNamespace("default")
	u.SetName(name)
	return u
}

func (b *bed) ensure() []schema.GroupVersionKind {
	return b.tmpl.Ensure(b.ctx, map[schema.GroupVersionKind]bool{widgetGVK: true})
}

func (b *bed) wait(what string, cond func() bool) {
	b.t.Helper()
	if err := wait.PollUntilContextTimeout(b.ctx, 5*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		b.t.Fatalf("waiting for %s: %v (events %v)", what, err, b.rec.all())
	}
}

func (b *bed) waitEvent(e string) {
	b.t.Helper()
	b.wait(e, func() bool { return b.rec.seen(e) })
}

// setDefinition creates or replaces the Widgets' CRD and waits until the
// handlers are told; the detector calls Ensure then.
func (b *bed) setDefinition(crd *apiextensionsv1.CustomResourceDefinition, create bool) {
	b.t.Helper()
	before := b.rec.changes()
	c := b.dyn.Resource(definitionsGVR)
	var err error
	if create {
		_, err = c.Create(b.ctx, definitionObject(b.t, crd), metav1.CreateOptions{})
	} else {
		_, err = c.Update(b.ctx, definitionObject(b.t, crd), metav1.UpdateOptions{})
	}
	if err != nil {
		b.t.Fatal(err)
	}
	b.wait("the definition change", func() bool { return b.rec.changes() > before })
}

func (b *bed) deleteDefinition() {
	b.t.Helper()
	before := b.rec.changes()
	if err := b.dyn.Resource(definitionsGVR).Delete(b.ctx, "widgets.example.io", metav1.DeleteOptions{}); err != nil {
		b.t.Fatal(err)
	}
	b.wait("the definition change", func() bool { return b.rec.changes() > before })
}

func (b *bed) createWidget(name string) {
	b.t.Helper()
	if _, err := b.dyn.Resource(widgetsV1).Namespace("default").Create(b.ctx, widget(name), metav1.CreateOptions{}); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bed) get(name string) error {
	_, err := b.tmpl.Get(b.ctx, widgetGVK, "default", name)
	return err
}

// A kind whose CRD is deleted loses its templates (its informer's are told
// deleted, though their own events did not come); the CRD created again
// is watched at once by a new informer, whose templates are all new; the
// same CRD no longer serving the version stops the informer and deletes
// nothing.
func TestFollowsDefinition(t *testing.T) {
	t.Parallel()
	b := newBed(t, definitionObject(t, widgetCRD("u1", true, "v1")), widget("a"))
	if missing := b.ensure(); len(missing) > 0 {
		t.Fatalf("missing %v", missing)
	}
	b.waitEvent("listed default/a")
	b.createWidget("b")
	b.waitEvent("add default/b")

	// The CRD goes; the fake, unlike the API server, keeps its objects.
	b.deleteDefinition()
	if missing := b.ensure(); !slices.Equal(missing, []schema.GroupVersionKind{widgetGVK}) {
		t.Errorf("missing %v once the CRD is deleted, want the Widgets", missing)
	}
	b.waitEvent("delete default/a")
	b.waitEvent("delete default/b")
	for _, name := range []string{"a", "b"} {
		if err := b.get(name); !apierrors.IsNotFound(err) {
			t.Errorf("get %s once the CRD is deleted: %v, want NotFound", name, err)
		}
	}
	if got := b.tmpl.List(widgetGVK, ""); got != nil {
		t.Errorf("list once the CRD is deleted: %v", got)
	}
	for _, name := range []string{"a", "b"} {
		if err := b.dyn.Resource(widgetsV1).Namespace("default").Delete(b.ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Created again, serving v1 and v2; c is created before Ensure runs.
	b.setDefinition(widgetCRD("u2", true, "v1", "v2"), true)
	if err := b.get("a"); !apierrors.IsNotFound(err) {
		t.Errorf("get a before Ensure: %v, want NotFound", err)
	}
	b.createWidget("c")
	if missing := b.ensure(); len(missing) > 0 {
		t.Fatalf("missing %v once the CRD is back", missing)
	}
	b.waitEvent("add default/c")
	if b.rec.seen("listed default/c") {
		t.Error("c, created after the CRD came back, was told listed")
	}
	b.wait("c in the cache", func() bool { return b.get("c") == nil })

	// The same CRD stops serving v1: c is still stored (as v2).
	b.setDefinition(widgetCRD("u2", true, "v2"), false)
	if missing := b.ensure(); !slices.Equal(missing, []schema.GroupVersionKind{widgetGVK}) {
		t.Errorf("missing %v once v1 is not served, want the Widgets", missing)
	}
	if err := b.get("c"); !errors.Is(err, ErrNotWatched) {
		t.Errorf("get c once v1 is not served: %v, want ErrNotWatched", err)
	}
	time.Sleep(50 * time.Millisecond)
	if b.rec.seen("delete default/c") {
		t.Errorf("c was told deleted: %v", b.rec.all())
	}
}

// A kind wanted before its CRD exists is watched once the CRD is
// Established; its templates are new, not listed.
func TestWatchesKindOnceDefined(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	if missing := b.ensure(); !slices.Equal(missing, []schema.GroupVersionKind{widgetGVK}) {
		t.Fatalf("missing %v without a CRD, want the Widgets", missing)
	}
	if err := b.get("a"); !errors.Is(err, ErrNotWatched) {
		t.Errorf("get a without a CRD: %v, want ErrNotWatched", err)
	}
	b.setDefinition(widgetCRD("u1", false, "v1"), true)
	if missing := b.ensure(); len(missing) != 1 {
		t.Fatalf("missing %v before the CRD is Established, want the Widgets", missing)
	}
	b.setDefinition(widgetCRD("u1", true, "v1"), false)
	b.createWidget("a")
	if missing := b.ensure(); len(missing) > 0 {
		t.Fatalf("missing %v once the CRD is Established", missing)
	}
	b.waitEvent("add default/a")
	if b.rec.seen("listed default/a") {
		t.Errorf("a was told listed: %v", b.rec.all())
	}
	b.wait("a in the cache", func() bool { return b.get("a") == nil })
}

// The informers hold templates compact (metadata without managedFields,
// the object as JSON); Get decodes a new object at each call, which its
// caller may change.
func TestHeldCompact(t *testing.T) {
	t.Parallel()
	w := widget("a")
	w.SetLabels(map[string]string{"app": "a"})
	w.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}})
	_ = unstructured.SetNestedField(w.Object, "big", "spec", "size")
	b := newBed(t, definitionObject(t, widgetCRD("u1", true, "v1")), w)
	if missing := b.ensure(); len(missing) > 0 {
		t.Fatalf("missing %v", missing)
	}
	b.waitEvent("listed default/a")
	held := b.tmpl.List(widgetGVK, "default")
	if len(held) != 1 || held[0].Labels["app"] != "a" || held[0].ManagedFields != nil {
		t.Fatalf("the cache holds %+v, want a with its labels and no managedFields", held)
	}
	got, err := b.tmpl.Get(b.ctx, widgetGVK, "default", "a")
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedString(got.Object, "spec", "size"); size != "big" || got.GetManagedFields() != nil || got.GetKind() != "Widget" {
		t.Errorf("Get = %v, want the widget without managedFields", got.Object)
	}
	got.Object["spec"] = nil
	if again, _ := b.tmpl.Get(b.ctx, widgetGVK, "default", "a"); again.Object["spec"] == nil {
		t.Error("a change to one Get shows in the next")
	}
}
