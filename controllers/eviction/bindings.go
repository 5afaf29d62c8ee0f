package eviction

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// binding is a binding of either kind, read from a lister: never modify it.
type binding struct {
	obj    runtime.Object
	meta   *metav1.ObjectMeta
	spec   *workv1alpha2.ResourceBindingSpec
	status *workv1alpha2.ResourceBindingStatus
}

func bindingOf(obj any) (*binding, bool) {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return &binding{obj: b, meta: &b.ObjectMeta, spec: &b.Spec, status: &b.Status}, true
	case *workv1alpha2.ClusterResourceBinding:
		return &binding{obj: b, meta: &b.ObjectMeta, spec: &b.Spec, status: &b.Status}, true
	case cache.DeletedFinalStateUnknown:
		return bindingOf(b.Obj)
	}
	return nil, false
}

func (b *binding) key() string { return names.BindingKey(b.meta.Namespace, b.meta.Name) }

// bindings reads and patches bindings of both kinds.
type bindings struct {
	rbs    worklisters.ResourceBindingLister
	crbs   worklisters.ClusterResourceBindingLister
	client versioned.Interface
	synced []cache.InformerSynced
}

func newBindings(rbs workinformers.ResourceBindingInformer, crbs workinformers.ClusterResourceBindingInformer, client versioned.Interface) bindings {
	return bindings{rbs: rbs.Lister(), crbs: crbs.Lister(), client: client,
		synced: []cache.InformerSynced{rbs.Informer().HasSynced, crbs.Informer().HasSynced}}
}

// get reads the binding of a BindingKey.
func (s bindings) get(key string) (*binding, error) {
	ns, name, isCluster, ok := names.ParseBindingKey(key)
	if !ok {
		return nil, fmt.Errorf("malformed key %q", key)
	}
	if isCluster {
		b, err := s.crbs.Get(name)
		if err != nil {
			return nil, err
		}
		out, _ := bindingOf(b)
		return out, nil
	}
	b, err := s.rbs.ResourceBindings(ns).Get(name)
	if err != nil {
		return nil, err
	}
	out, _ := bindingOf(b)
	return out, nil
}

// patch merge-patches the binding of key: its spec, or the subresource
// named ("status").
func (s bindings) patch(ctx context.Context, key string, body []byte, fieldManager string, subresource ...string) error {
	ns, name, isCluster, ok := names.ParseBindingKey(key)
	if !ok {
		return fmt.Errorf("malformed key %q", key)
	}
	opts := metav1.PatchOptions{FieldManager: fieldManager}
	var err error
	if isCluster {
		_, err = s.client.WorkV1alpha2().ClusterResourceBindings().Patch(ctx, name, types.MergePatchType, body, opts, subresource...)
	} else {
		_, err = s.client.WorkV1alpha2().ResourceBindings(ns).Patch(ctx, name, types.MergePatchType, body, opts, subresource...)
	}
	return err
}

// onBindings adds handler to both binding informers.
func onBindings(handler cache.ResourceEventHandler, infs ...cache.SharedIndexInformer) error {
	for _, inf := range infs {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
	}
	return nil
}

// byCluster indexes bindings by the clusters they are scheduled to.
const byCluster = "eviction.byCluster"

func indexByCluster(obj any) ([]string, error) {
	b, ok := bindingOf(obj)
	if !ok {
		return nil, nil
	}
	out := make([]string, 0, len(b.spec.Clusters))
	for _, c := range b.spec.Clusters {
		out = append(out, c.Name)
	}
	return out, nil
}

// addClusterIndex indexes both binding informers by cluster (once: the
// informers are shared).
func addClusterIndex(infs ...cache.SharedIndexInformer) error {
	for _, inf := range infs {
		if _, ok := inf.GetIndexer().GetIndexers()[byCluster]; ok {
			continue
		}
		if err := inf.AddIndexers(cache.Indexers{byCluster: indexByCluster}); err != nil {
			return err
		}
	}
	return nil
}
