// Package cluster assembles the cluster.karmada.io API group.
package cluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clusterstorage "github.com/flotilla-io/flotilla/registry/cluster/cluster/storage"
)

// NewAPIGroupInfo returns the storage of every cluster.karmada.io resource.
// extra adds subresources served by other packages (clusters/proxy).
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter, extra map[string]rest.Storage) (*genericapiserver.APIGroupInfo, error) {
	info := genericapiserver.NewDefaultAPIGroupInfo(clusterv1alpha1.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	clusters, status, err := clusterstorage.NewREST(scheme, opts)
	if err != nil {
		return nil, fmt.Errorf("cluster storage: %w", err)
	}
	storage := map[string]rest.Storage{"clusters": clusters, "clusters/status": status}
	for k, v := range extra {
		storage[k] = v
	}
	info.VersionedResourcesStorageMap[clusterv1alpha1.SchemeGroupVersion.Version] = storage
	return &info, nil
}
