package clusterprofile

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/inventory"
)

const ns = "inventory"

var access = inventory.Access{Server: "https://cp:6443"}

func ready(name string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0))},
		Status: clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.36.1",
			Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.NewTime(time.Unix(1e9, 0))}}}}
}

// TestReconcile: the writes one reconcile makes, by what the caches hold.
func TestReconcile(t *testing.T) {
	t.Parallel()
	deleting := ready("member1")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(2e9, 0)}
	stale := inventory.Profile(ready("member1"), ns, access)
	_ = unstructured.SetNestedField(stale.Object, "v1.35.0", "status", "version", "kubernetes")
	tests := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		profile *unstructured.Unstructured // in the cache and the store
		want    []string                   // verb[/subresource] of each write
	}{
		{name: "a new cluster: created, then its status", cluster: ready("member1"), want: []string{"create", "patch/status"}},
		{name: "up to date: nothing written", cluster: ready("member1"), profile: inventory.Profile(ready("member1"), ns, access)},
		{name: "status behind: one patch", cluster: ready("member1"), profile: stale, want: []string{"patch/status"}},
		{name: "cluster deleting: profile deleted", cluster: deleting, profile: inventory.Profile(ready("member1"), ns, access), want: []string{"delete"}},
		{name: "cluster gone: profile deleted", profile: inventory.Profile(ready("member1"), ns, access), want: []string{"delete"}},
		{name: "cluster gone, no profile: nothing", want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			scheme := runtime.NewScheme()
			gvk := multiclusterv1alpha1.SchemeGroupVersion.WithKind(multiclusterv1alpha1.ClusterProfileKind)
			scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
			scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
			var objs []runtime.Object
			profiles := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			if tc.profile != nil {
				p := tc.profile.DeepCopy()
				p.SetUID("uid-1")
				objs = append(objs, p)
				_ = profiles.Add(p)
			}
			dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
				map[schema.GroupVersionResource]string{multiclusterv1alpha1.ClusterProfiles: gvk.Kind + "List"}, objs...)
			clusters := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			if tc.cluster != nil {
				_ = clusters.Add(tc.cluster)
			}
			host := kubefake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
			c := &Controller{clusters: clusterlisters.NewClusterLister(clusters),
				profiles: cache.NewGenericLister(profiles, multiclusterv1alpha1.ClusterProfiles.GroupResource()).ByNamespace(ns),
				client:   dc.Resource(multiclusterv1alpha1.ClusterProfiles).Namespace(ns), host: host, namespace: ns, access: access}
			if err := c.reconcile(context.Background(), "member1"); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range dc.Actions() {
				if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
					continue
				}
				v := a.GetVerb()
				if s := a.GetSubresource(); s != "" {
					v += "/" + s
				}
				got = append(got, v)
				if p, ok := a.(clienttesting.PatchAction); ok && p.GetSubresource() != "status" {
					t.Errorf("a patch of the object itself: %s", p.GetPatch())
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("writes %v, want %v", got, tc.want)
			}
		})
	}
}
