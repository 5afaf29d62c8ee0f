package work

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// SchedulingSubresource is where a scheduler writes a decision in one
// request: spec.clusters, the applied-placement annotation and the
// status, as pods/binding lets kube-scheduler set a pod's node and
// condition together. Every other field is kept as stored, whoever
// writes; it is Flotilla's own (a Karmada client writes the binding and
// its status subresource, which behave as before).
const SchedulingSubresource = "scheduling"

// schedulingStrategy is the update strategy of bindings' scheduling
// subresource: the status subresource's (new status and metadata, stored
// spec), plus the new spec.clusters; the generation moves when they
// change. Both the binding's and its status's validation run.
type schedulingStrategy struct {
	*resource.StatusStrategy
	main *resource.Strategy
}

func newSchedulingStrategy(main *resource.Strategy) schedulingStrategy {
	return schedulingStrategy{StatusStrategy: resource.NewStatusStrategy(main), main: main}
}

// bindingSpec returns the spec of a ResourceBinding or ClusterResourceBinding.
func bindingSpec(obj runtime.Object) *workv1alpha2.ResourceBindingSpec {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return &b.Spec
	case *workv1alpha2.ClusterResourceBinding:
		return &b.Spec
	}
	return nil
}

func (s schedulingStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	spec, prev := bindingSpec(obj), bindingSpec(old)
	if spec == nil || prev == nil {
		s.StatusStrategy.PrepareForUpdate(ctx, obj, old)
		return
	}
	clusters := spec.Clusters
	s.StatusStrategy.PrepareForUpdate(ctx, obj, old)
	spec = bindingSpec(obj)
	spec.Clusters = clusters
	newMeta, err1 := meta.Accessor(obj)
	oldMeta, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return
	}
	if apiequality.Semantic.DeepEqual(clusters, prev.Clusters) {
		newMeta.SetGeneration(oldMeta.GetGeneration())
	} else {
		newMeta.SetGeneration(oldMeta.GetGeneration() + 1)
	}
}

func (s schedulingStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return append(s.main.ValidateUpdate(ctx, obj, old), s.StatusStrategy.ValidateUpdate(ctx, obj, old)...)
}

// newSchedulingREST returns the scheduling subresource over a binding
// kind's store.
func newSchedulingREST(main *resource.REST) (*resource.StatusREST, bool) {
	strategy, ok := main.Store.UpdateStrategy.(*resource.Strategy)
	if !ok {
		return nil, false
	}
	store := *main.Store
	store.CreateStrategy, store.DeleteStrategy, store.ResetFieldsStrategy = nil, nil, nil
	store.UpdateStrategy = newSchedulingStrategy(strategy)
	return resource.NewStatusREST(&store), true
}
