package member

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

func deployment(name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetLabels(lbls)
	u.SetAnnotations(map[string]string{searchv1alpha1.CachedFromClusterAnnotation: "m1"})
	return u
}

// A reader with a label selector (execution: the objects Flotilla applied)
// reads the shared copy as the member would answer it: only matching
// objects, a modification that stops matching as a deletion, and without
// the shared copy's cached-from-cluster mark.
func TestSourceSelectsTheSharedCopy(t *testing.T) {
	t.Parallel()
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	applied := map[string]string{"app": "web", "work.karmada.io/permanent-id": "x"}
	fw := watch.NewFake()
	shared := func(cluster string, g schema.GroupVersionResource, _ runtime.Decoder, newList func() runtime.Object) (cache.ListerWatcher, bool) {
		if cluster != "m1" || g != gvr {
			return nil, false
		}
		return &cache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				l := newList().(*unstructured.UnstructuredList)
				l.Items = []unstructured.Unstructured{*deployment("a", applied), *deployment("theirs", map[string]string{"app": "x"})}
				l.SetResourceVersion("10")
				return l, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fw, nil },
		}, true
	}
	memberAsked := false
	fromMember := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			memberAsked = true
			return &unstructured.UnstructuredList{}, nil
		},
	}
	sel, err := labels.Parse("work.karmada.io/permanent-id")
	if err != nil {
		t.Fatal(err)
	}
	lw := &sourceLW{cluster: "m1", gvr: gvr, member: fromMember, shared: shared, newList: func() runtime.Object { return &unstructured.UnstructuredList{} },
		decoder: unstructured.UnstructuredJSONScheme, selector: sel, checkEvery: defaultSwitchCheck}

	obj, err := cache.ToListerWatcherWithContext(lw).ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items := obj.(*unstructured.UnstructuredList).Items
	if len(items) != 1 || items[0].GetName() != "a" {
		t.Fatalf("listed %v, want only a", items)
	}
	if _, ok := items[0].GetAnnotations()[searchv1alpha1.CachedFromClusterAnnotation]; ok {
		t.Error("the cached-from-cluster annotation reached the reader")
	}
	if memberAsked {
		t.Error("the member was listed although the shared copy holds the resource")
	}

	w, err := cache.ToListerWatcherWithContext(lw).WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "10"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		fw.Add(deployment("theirs-2", map[string]string{"app": "x"}))
		fw.Add(deployment("b", applied))
		fw.Modify(deployment("a", map[string]string{"app": "web"}))
		fw.Modify(deployment("b", applied))
	}()
	want := []struct {
		typ  watch.EventType
		name string
	}{{watch.Added, "b"}, {watch.Deleted, "a"}, {watch.Modified, "b"}}
	for _, wnt := range want {
		select {
		case ev := <-w.ResultChan():
			u := ev.Object.(*unstructured.Unstructured)
			if ev.Type != wnt.typ || u.GetName() != wnt.name {
				t.Errorf("event %s %s, want %s %s", ev.Type, u.GetName(), wnt.typ, wnt.name)
			}
			if _, ok := u.GetAnnotations()[searchv1alpha1.CachedFromClusterAnnotation]; ok {
				t.Error("the cached-from-cluster annotation reached the reader")
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no event, want %s %s", wnt.typ, wnt.name)
		}
	}
}
