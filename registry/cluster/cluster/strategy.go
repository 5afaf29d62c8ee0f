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
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
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

// Validate validates a new cluster. An agent (which RBAC does not let
// create Clusters unless an admin gave it more rights) may create only its
// own, in Pull mode, as if from an empty Pull cluster.
func (Strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	c := obj.(*clusterv1alpha1.Cluster)
	errs := validation.ValidateCluster(c)
	empty := &clusterv1alpha1.Cluster{ObjectMeta: *c.ObjectMeta.DeepCopy(), Spec: clusterv1alpha1.ClusterSpec{
		SyncMode: clusterv1alpha1.Pull, ID: c.Spec.ID, ResourceModels: c.Spec.ResourceModels}}
	return append(errs, validateAgentWrite(ctx, c, empty)...)
}

// ValidateUpdate validates an update of a cluster; an agent's update is
// also held to what an agent may change.
func (Strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*clusterv1alpha1.Cluster), old.(*clusterv1alpha1.Cluster)
	errs := validation.ValidateClusterUpdate(c, oldC)
	return append(errs, validateAgentWrite(ctx, c, oldC)...)
}

// validateAgentWrite confines an agent identity to what Karmada's agent
// reports of its own cluster (validation.ValidateClusterUpdateByAgent).
// RBAC already limits an agent to its own Cluster by name; this limits the
// fields, which RBAC cannot.
func validateAgentWrite(ctx context.Context, c, old *clusterv1alpha1.Cluster) field.ErrorList {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil
	}
	agentOf, ok := validation.AgentCluster(u.GetName(), u.GetGroups())
	if !ok {
		return nil
	}
	return validation.ValidateClusterUpdateByAgent(agentOf, c, old)
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

// ValidateUpdate accepts any status, as Karmada does; metadata rules still
// apply, and an agent may not change metadata through status either.
func (StatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validateAgentWrite(ctx, obj.(*clusterv1alpha1.Cluster), old.(*clusterv1alpha1.Cluster))
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
