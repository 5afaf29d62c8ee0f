// Package cluster holds the strategies of the clusters resource: defaulting
// and validation on write, status kept apart from spec, and selectable fields.
package cluster

import (
	"context"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/flotilla-io/flotilla/apis/cluster/mutation"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/cluster/validation"
)

// Strategy is the create, update and delete strategy of clusters.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	now func() time.Time
}

// NewStrategy returns the strategy of clusters.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, now: time.Now}
}

// NamespaceScoped implements rest.RESTCreateStrategy: clusters are cluster-scoped.
func (Strategy) NamespaceScoped() bool { return false }

// GetResetFields implements rest.ResetFieldsStrategy: status is not written through the main resource.
func (Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(clusterv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// PrepareForCreate clears status, starts the generation and applies the
// write-time defaults Karmada's webhook applies.
func (s Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	c := obj.(*clusterv1alpha1.Cluster)
	c.Status = clusterv1alpha1.ClusterStatus{}
	c.Generation = 1
	mutation.MutateCluster(c, true, s.now())
}

// PrepareForUpdate keeps the stored status and bumps the generation when the spec changes.
func (s Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	c, oldC := obj.(*clusterv1alpha1.Cluster), old.(*clusterv1alpha1.Cluster)
	c.Status = oldC.Status
	mutation.MutateCluster(c, false, s.now())
	if !apiequality.Semantic.DeepEqual(c.Spec, oldC.Spec) {
		c.Generation = oldC.Generation + 1
	}
}

// Validate validates a new cluster.
func (Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateCluster(obj.(*clusterv1alpha1.Cluster))
}

// ValidateUpdate validates an update of a cluster.
func (Strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateClusterUpdate(obj.(*clusterv1alpha1.Cluster), old.(*clusterv1alpha1.Cluster))
}

// WarningsOnCreate implements rest.RESTCreateStrategy.
func (Strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// WarningsOnUpdate implements rest.RESTUpdateStrategy.
func (Strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// Canonicalize implements rest.RESTCreateStrategy.
func (Strategy) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate implements rest.RESTUpdateStrategy: PUT never creates a cluster.
func (Strategy) AllowCreateOnUpdate() bool { return false }

// AllowUnconditionalUpdate implements rest.RESTUpdateStrategy.
func (Strategy) AllowUnconditionalUpdate() bool { return true }

// StatusStrategy is the strategy of clusters/status: only status changes.
type StatusStrategy struct {
	Strategy
}

// NewStatusStrategy returns the strategy of clusters/status.
func NewStatusStrategy(s Strategy) StatusStrategy { return StatusStrategy{s} }

// GetResetFields implements rest.ResetFieldsStrategy: spec is not written through status.
func (StatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(clusterv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("spec")),
	}
}

// PrepareForUpdate keeps the stored spec.
func (StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*clusterv1alpha1.Cluster).Spec = old.(*clusterv1alpha1.Cluster).Spec
}

// ValidateUpdate accepts any status, as Karmada does; metadata rules still apply.
func (StatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return nil
}

// GetAttrs returns the labels and selectable fields of a cluster.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	c, ok := obj.(*clusterv1alpha1.Cluster)
	if !ok {
		return nil, nil, fmt.Errorf("not a Cluster: %T", obj)
	}
	return c.Labels, generic.ObjectMetaFieldsSet(&c.ObjectMeta, false), nil
}

// Match returns the selection predicate of clusters.
func Match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
