// Package storage holds the etcd-backed REST storage of clusters and their
// status subresource.
package storage

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/registry/cluster/cluster"
)

// REST is the storage of clusters.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.Storage             = &REST{}
	_ rest.Patcher             = &StatusREST{}
	_ rest.ResetFieldsStrategy = &StatusREST{}
)

// StatusREST is the storage of clusters/status.
type StatusREST struct {
	store *genericregistry.Store
}

// NewREST returns the storage of clusters and of their status.
func NewREST(scheme *runtime.Scheme, opts generic.RESTOptionsGetter) (*REST, *StatusREST, error) {
	strategy := cluster.NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &clusterv1alpha1.Cluster{} },
		NewListFunc:               func() runtime.Object { return &clusterv1alpha1.ClusterList{} },
		PredicateFunc:             cluster.Match,
		DefaultQualifiedResource:  clusterv1alpha1.Resource("clusters"),
		SingularQualifiedResource: clusterv1alpha1.Resource("cluster"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		ResetFieldsStrategy:       strategy,
		TableConvertor:            cluster.TableConvertor{},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: opts, AttrFunc: cluster.GetAttrs}); err != nil {
		return nil, nil, fmt.Errorf("completing the cluster store: %w", err)
	}
	status := *store
	status.CreateStrategy, status.DeleteStrategy = nil, nil
	statusStrategy := cluster.NewStatusStrategy(strategy)
	status.UpdateStrategy, status.ResetFieldsStrategy = statusStrategy, statusStrategy
	return &REST{store}, &StatusREST{store: &status}, nil
}

// New implements rest.Storage.
func (r *StatusREST) New() runtime.Object { return &clusterv1alpha1.Cluster{} }

// Destroy implements rest.Storage; the main store owns the backend.
func (r *StatusREST) Destroy() {}

// Get implements rest.Getter.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update implements rest.Updater; only status changes.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// Subresources never create.
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable implements rest.TableConvertor.
func (r *StatusREST) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, obj, opts)
}
