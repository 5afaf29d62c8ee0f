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

// specAndStatus returns the spec and status of a ResourceBinding or
// ClusterResourceBinding.
func specAndStatus(obj runtime.Object) (*workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus) {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return &b.Spec, &b.Status
	case *workv1alpha2.ClusterResourceBinding:
		return &b.Spec, &b.Status
	}
	return nil, nil
}

// PrepareForUpdate keeps the stored spec but for spec.clusters. When the
// clusters change, the generation moves, and a decision written for the
// stored generation (schedulerObservedGeneration, the Scheduled
// condition's observedGeneration) observes the new one: its own result is
// the only change, as when Karmada's scheduler writes the spec and then
// the status with the generation that write made.
func (s schedulingStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	spec, _ := specAndStatus(obj)
	prev, _ := specAndStatus(old)
	if spec == nil || prev == nil {
		s.StatusStrategy.PrepareForUpdate(ctx, obj, old)
		return
	}
	clusters := spec.Clusters
	s.StatusStrategy.PrepareForUpdate(ctx, obj, old)
	spec, status := specAndStatus(obj)
	spec.Clusters = clusters
	newMeta, err1 := meta.Accessor(obj)
	oldMeta, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return
	}
	was := oldMeta.GetGeneration()
	if apiequality.Semantic.DeepEqual(clusters, prev.Clusters) {
		newMeta.SetGeneration(was)
		return
	}
	newMeta.SetGeneration(was + 1)
	if status.SchedulerObservedGeneration == was {
		status.SchedulerObservedGeneration = was + 1
	}
	if c := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled); c != nil && c.ObservedGeneration == was {
		c.ObservedGeneration = was + 1
	}
}

func (s schedulingStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return append(s.main.ValidateUpdate(ctx, obj, old), s.StatusStrategy.ValidateUpdate(ctx, obj, old)...)
}

// newSchedulingREST returns the scheduling subresource over a binding
// kind's store.
func newSchedulingREST(main *resource.REST) (*resource.StatusREST, bool) {
	strategy, ok := main.UpdateStrategy.(*resource.Strategy)
	if !ok {
		return nil, false
	}
	store := *main.Store
	store.CreateStrategy, store.DeleteStrategy, store.ResetFieldsStrategy = nil, nil, nil
	store.UpdateStrategy = newSchedulingStrategy(strategy)
	return resource.NewStatusREST(&store), true
}
