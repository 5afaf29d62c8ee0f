// Package storage holds the etcd-backed REST storage of clusters and their
// status subresource.
package storage

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/registry/cluster/cluster"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// REST is the storage of clusters.
type REST struct {
	*genericregistry.Store
}

var _ rest.Storage = &REST{}

// StatusREST is the storage of clusters/status.
type StatusREST = resource.StatusREST

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
	return &REST{store}, resource.NewStatusREST(&status), nil
}
