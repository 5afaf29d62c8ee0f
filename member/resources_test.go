package member

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

var (
	testExports = schema.GroupVersionResource{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Resource: "serviceexports"}
	testSlices  = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// seen records the names a handler received, by cluster.
type seen struct {
	mu    sync.Mutex
	names map[string][]string
}

func (s *seen) handler(cluster string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.names[cluster] = append(s.names[cluster], obj.(*unstructured.Unstructured).GetName())
	}}
}

func (s *seen) of(cluster string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.names[cluster]...)
}

func unstructuredObj(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
	u.SetAnnotations(map[string]string{searchv1alpha1.CachedFromClusterAnnotation: "m1", "keep": "me"})
	return u
}

// A registered resource is watched in the members that serve it, from
// the member's start and as soon as its Cluster lists it, and stopped when
// it no longer does; an on-demand one from a reader's first Watch. Each
// member's events reach the handler made for that member, without the
// objects' managed fields and the search cache's mark.
func TestHubResources(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl, err := NewClient(&rest.Config{Host: "https://m1"})
	if err != nil {
		t.Fatal(err)
	}
	cl.Clientset = fake.NewClientset()
	cl.Dynamic = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{testExports: "ServiceExportList", testSlices: "EndpointSliceList"},
		unstructuredObj("multicluster.x-k8s.io/v1alpha1", "ServiceExport", "ns", "web"),
		unstructuredObj("discovery.k8s.io/v1", "EndpointSlice", "ns", "web-abcde"))
	ready := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Status: clusterv1alpha1.ClusterStatus{
		Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}}}
	clusters := []*clusterv1alpha1.Cluster{ready}
	s := NewHub(func() ([]*clusterv1alpha1.Cluster, error) { return clusters, nil }, func(*clusterv1alpha1.Cluster) (*Client, error) { return cl, nil })
	s.runCtx = ctx
	exports, slices := &seen{names: map[string][]string{}}, &seen{names: map[string][]string{}}
	if err := s.AddResource(Resource{GVR: testExports}, exports.handler); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(Resource{GVR: testSlices, OnDemand: true}, slices.handler); err != nil {
		t.Fatal(err)
	}

	// Not served yet: not watched.
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Informer("m1", testExports); ok {
		t.Fatal("a resource the member does not serve is watched")
	}
	// Served: watched, and the listed object reaches the handler trimmed.
	served := ready.DeepCopy()
	served.Status.APIEnablements = []clusterv1alpha1.APIEnablement{{GroupVersion: "multicluster.x-k8s.io/v1alpha1",
		Resources: []clusterv1alpha1.APIResource{{Name: "serviceexports", Kind: "ServiceExport"}}}}
	clusters = []*clusterv1alpha1.Cluster{served}
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	inf, ok := s.Informer("m1", testExports)
	if !ok {
		t.Fatal("a served resource is not watched")
	}
	waitFor(t, func() bool { return inf.HasSynced() && len(exports.of("m1")) == 1 })
	obj, exists, err := inf.GetIndexer().GetByKey("ns/web")
	if err != nil || !exists {
		t.Fatalf("ns/web not in the store: %v", err)
	}
	if u := obj.(*unstructured.Unstructured); len(u.GetManagedFields()) != 0 || len(u.GetAnnotations()) != 1 {
		t.Errorf("stored object not trimmed: managedFields %v annotations %v", u.GetManagedFields(), u.GetAnnotations())
	}
	// A handler registered while the informer runs gets what it holds.
	late := &seen{names: map[string][]string{}}
	if err := s.AddResource(Resource{GVR: testExports}, late.handler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(late.of("m1")) == 1 })
	// On demand: nothing until asked for; not registered: refused.
	if _, ok := s.Informer("m1", testSlices); ok {
		t.Error("an on-demand resource was watched before a reader asked")
	}
	if _, ok := s.Watch("m1", podsResource); ok {
		t.Error("Watch started an unregistered resource")
	}
	if _, ok := s.Watch("m2", testSlices); ok {
		t.Error("Watch started a resource in a member whose informers do not run")
	}
	eps, ok := s.Watch("m1", testSlices)
	if !ok {
		t.Fatal("Watch did not start an on-demand resource")
	}
	waitFor(t, func() bool { return eps.HasSynced() && len(slices.of("m1")) == 1 })
	if again, _ := s.Watch("m1", testSlices); again != eps {
		t.Error("a second Watch started a second informer")
	}
	// Still running across syncs; no longer served: stopped.
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Informer("m1", testExports); again != inf {
		t.Error("a sync restarted a running informer")
	}
	clusters = []*clusterv1alpha1.Cluster{ready}
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Informer("m1", testExports); ok {
		t.Error("a resource the member no longer serves is still watched")
	}
	if _, ok := s.Informer("m1", testSlices); !ok {
		t.Error("the on-demand informer stopped with an unrelated resource")
	}
	// The member stops: so do its resources.
	s.Forget("m1")
	if _, ok := s.Informer("m1", testSlices); ok {
		t.Error("a forgotten member's resource is still watched")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatal("condition never met")
	}
}

// recorder records the keys and types a handler received, by cluster.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) handler(cluster string) cache.ResourceEventHandler {
	rec := func(kind string, obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		key, _ := cache.MetaNamespaceKeyFunc(obj)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, fmt.Sprintf("%s %s %s %T", cluster, kind, key, obj))
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { rec("add", obj) },
		UpdateFunc: func(_, obj any) { rec("update", obj) },
		DeleteFunc: func(obj any) { rec("delete", obj) },
	}
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	slices.Sort(out)
	return out
}

// Readers of one kind share one informer per member. A reader alone with
// a selector and compact objects (execution) has an informer that selects
// and compacts; a second reader that wants every object as it is (the
// MCS controllers) has it built again, wider, and the first reader's
// handler still gets only what its selector matches (an object that stops
// matching as a deletion). A reader whose context ends is removed, and the
// informer stops with the last one. A kind asked for in a member watches
// again when the member starts on a new connection.
func TestHubResourceReaders(t *testing.T) {
	// The fake dynamic client does not serve watch-list as a member does.
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc := func(name string, lbls map[string]string) *unstructured.Unstructured {
		u := unstructuredObj("v1", "Service", "ns", name)
		u.SetLabels(lbls)
		return u
	}
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	applied := map[string]string{"work.karmada.io/permanent-id": "p"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{services: "ServiceList"},
		svc("ours", applied), svc("theirs", nil))
	clientOf := func(host string) *Client {
		cl := clientOn(t, host)
		cl.Dynamic = dyn
		return cl
	}
	cl := clientOf("https://a")
	ready := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Status: clusterv1alpha1.ClusterStatus{
		Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}}}
	s := NewHub(func() ([]*clusterv1alpha1.Cluster, error) { return []*clusterv1alpha1.Cluster{ready}, nil },
		func(*clusterv1alpha1.Cluster) (*Client, error) { return cl, nil })
	s.runCtx = ctx
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	sel, err := labels.Parse("work.karmada.io/permanent-id")
	if err != nil {
		t.Fatal(err)
	}

	exec := &recorder{}
	if err := s.Handle(ctx, Resource{GVR: services, OnDemand: true, Selector: sel, Compact: true, Annotations: []string{"keep"}}, exec.handler); err != nil {
		t.Fatal(err)
	}
	inf, ok := s.Watch("m1", services)
	if !ok {
		t.Fatal("Watch did not start a registered resource")
	}
	waitFor(t, func() bool { return inf.HasSynced() && len(exec.take()) == 1 })
	obj, ok, _ := inf.GetStore().GetByKey("ns/ours")
	c, compact := obj.(*Compact)
	if !ok || !compact || c.Labels["work.karmada.io/permanent-id"] != "p" || c.Annotations["keep"] != "me" || len(c.Annotations) != 1 {
		t.Fatalf("the selecting informer holds %#v, want a Compact with the selected label and the named annotation", obj)
	}
	if _, ok, _ := inf.GetStore().GetByKey("ns/theirs"); ok {
		t.Error("the selecting informer holds an object its selector does not match")
	}

	// A reader of every object, as it is: the informer is built again.
	mcsCtx, mcsGone := context.WithCancel(ctx)
	mcs := &recorder{}
	if err := s.Handle(mcsCtx, Resource{GVR: services, OnDemand: true}, mcs.handler); err != nil {
		t.Fatal(err)
	}
	wide, _ := s.Informer("m1", services)
	if wide == inf {
		t.Fatal("a wider reader did not have the informer built again")
	}
	waitFor(t, func() bool { return wide.HasSynced() && len(wide.GetStore().List()) == 2 })
	waitFor(t, func() bool {
		got := mcs.take()
		return slices.Equal(got, []string{"m1 add ns/ours *unstructured.Unstructured", "m1 add ns/theirs *unstructured.Unstructured"})
	})
	if got := exec.take(); !slices.Equal(got, []string{"m1 add ns/ours *unstructured.Unstructured"}) {
		t.Errorf("the selecting reader got %v from the wide informer, want ns/ours only", got)
	}
	// An object that stops matching is a deletion for the selecting reader.
	unlabelled := svc("ours", nil)
	unlabelled.SetResourceVersion("5")
	if _, err := dyn.Resource(services).Namespace("ns").Update(ctx, unlabelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return slices.Equal(mcs.take(), []string{"m1 update ns/ours *unstructured.Unstructured"}) })
	waitFor(t, func() bool {
		return slices.Equal(exec.take(), []string{"m1 delete ns/ours *unstructured.Unstructured"})
	})

	// The wide reader goes: its handler is removed, the informer stays.
	mcsGone()
	waitFor(t, func() bool {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return len(s.resources[services].regs) == 1
	})
	if _, err := dyn.Resource(services).Namespace("ns").Create(ctx, svc("new", applied), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return slices.Equal(exec.take(), []string{"m1 add ns/new *unstructured.Unstructured"}) })
	if got := mcs.take(); len(got) != 0 {
		t.Errorf("a removed reader still got %v", got)
	}

	// The member moves to a new connection: the kind asked for watches again.
	cl = clientOf("https://a2")
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	again, ok := s.Informer("m1", services)
	if !ok || again == wide {
		t.Fatal("the asked-for kind does not watch again on the member's new connection")
	}
	waitFor(t, func() bool { return again.HasSynced() })

	// The last reader goes: the informer stops.
	cancel()
	waitFor(t, func() bool { _, ok := s.Informer("m1", services); return !ok })
}
