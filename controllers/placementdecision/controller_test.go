package placementdecision

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/inventory"
)

const inventoryNS = "flotilla-inventory"

func binding(clusters ...string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx-deployment",
		Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "0b7f0f5c-1111-4a3e-9f00-2c4c6a1b2d3e"}}}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 1})
	}
	return rb
}

func placementOf(rb *workv1alpha2.ResourceBinding) inventory.Placement {
	return inventory.Placement{Kind: kindRB, Namespace: rb.Namespace, Name: rb.Name, PermanentID: rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel], Clusters: rb.Spec.Clusters}
}

// TestReconcile: the writes one reconcile of a binding makes, by what the
// caches hold.
func TestReconcile(t *testing.T) {
	t.Parallel()
	all := func(string) bool { return true }
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("m%03d", i)
	}
	deleting := binding("member1")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(2e9, 0)}
	tests := []struct {
		name     string
		binding  *workv1alpha2.ResourceBinding
		clusters []string
		slices   []*unstructured.Unstructured // in the cache and the store
		want     []string                     // verb name of each write
	}{{
		name: "a new binding: its slice created", binding: binding("member1", "member2"), clusters: []string{"member1", "member2"},
		want: []string{"create nginx-deployment-0"},
	}, {
		name: "up to date: nothing written", binding: binding("member1", "member2"), clusters: []string{"member1", "member2"},
		slices: inventory.Decisions(placementOf(binding("member1", "member2")), "default", inventoryNS, all),
	}, {
		name: "rescheduled: one patch", binding: binding("member2"), clusters: []string{"member1", "member2"},
		slices: inventory.Decisions(placementOf(binding("member1", "member2")), "default", inventoryNS, all),
		want:   []string{"patch nginx-deployment-0"},
	}, {
		name: "a cluster deleted: its decision dropped", binding: binding("member1", "member2"), clusters: []string{"member1"},
		slices: inventory.Decisions(placementOf(binding("member1", "member2")), "default", inventoryNS, all),
		want:   []string{"patch nginx-deployment-0"},
	}, {
		name: "fewer clusters: the extra slice deleted", binding: binding("member1"), clusters: append(many, "member1"),
		slices: inventory.Decisions(placementOf(binding(many...)), "default", inventoryNS, all),
		want:   []string{"delete nginx-deployment-1", "patch nginx-deployment-0"}, // sorted
	}, {
		name: "binding deleting: its slices deleted", binding: deleting, clusters: []string{"member1"},
		slices: inventory.Decisions(placementOf(binding("member1")), "default", inventoryNS, all),
		want:   []string{"delete nginx-deployment-0"},
	}, {
		name: "binding gone: its slices deleted", clusters: []string{"member1"},
		slices: inventory.Decisions(placementOf(binding("member1")), "default", inventoryNS, all),
		want:   []string{"delete nginx-deployment-0"},
	}, {
		name: "binding gone, no slices: nothing",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			scheme := runtime.NewScheme()
			gvk := multiclusterv1alpha1.SchemeGroupVersion.WithKind(multiclusterv1alpha1.PlacementDecisionKind)
			scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
			scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{byBinding: func(obj any) ([]string, error) {
				return []string{obj.(*unstructured.Unstructured).GetAnnotations()[inventory.AnnotationBinding]}, nil
			}})
			var objs []runtime.Object
			for i, s := range tc.slices {
				s = s.DeepCopy()
				s.SetUID(types.UID(fmt.Sprintf("uid-%d", i)))
				objs = append(objs, s)
				_ = indexer.Add(s)
			}
			dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
				map[schema.GroupVersionResource]string{multiclusterv1alpha1.PlacementDecisions: gvk.Kind + "List"}, objs...)
			rbs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			if tc.binding != nil {
				_ = rbs.Add(tc.binding)
			}
			clusters := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			for _, name := range tc.clusters {
				_ = clusters.Add(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
			}
			c := &Controller{
				rbs:      worklisters.NewResourceBindingLister(rbs),
				crbs:     worklisters.NewClusterResourceBindingLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})),
				clusters: clusterlisters.NewClusterLister(clusters),
				slices:   indexer, client: dc.Resource(multiclusterv1alpha1.PlacementDecisions),
				host:      kubefake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: inventoryNS}}),
				namespace: inventoryNS,
			}
			if err := c.reconcile(context.Background(), key(kindRB, "default", "nginx-deployment")); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range dc.Actions() {
				switch w := a.(type) {
				case clienttesting.CreateAction:
					got = append(got, a.GetVerb()+" "+w.GetObject().(*unstructured.Unstructured).GetName())
				case clienttesting.PatchAction:
					got = append(got, a.GetVerb()+" "+w.GetName())
				case clienttesting.DeleteAction:
					got = append(got, a.GetVerb()+" "+w.GetName())
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("writes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	for _, k := range []string{key(kindRB, "default", "web"), key(kindCRB, "", "ns-web")} {
		kind, ns, name, ok := parseKey(k)
		if !ok || key(kind, ns, name) != k {
			t.Errorf("parseKey(%q) = %s %s %s %v", k, kind, ns, name, ok)
		}
	}
	for _, bad := range []string{"", "Deployment default/web", "ResourceBinding web", "ResourceBinding /web"} {
		if _, _, _, ok := parseKey(bad); ok {
			t.Errorf("parseKey(%q) accepted", bad)
		}
	}
}
