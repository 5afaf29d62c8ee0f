// Package cluster assembles the cluster.karmada.io API group: clusters,
// their status, clusters/proxy and clusters/tunnel.
package cluster

import (
	"context"
	"fmt"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/proxy"
	clusterstorage "github.com/flotilla-io/flotilla/registry/cluster/cluster/storage"
	"github.com/flotilla-io/flotilla/tunnel"
)

// fromCache reads from the watch cache: the proxy looks a cluster up on
// every request and must not pay an etcd round trip for it.
var fromCache = &metav1.GetOptions{ResourceVersion: "0"}

// NewAPIGroupInfo returns the storage of every cluster.karmada.io resource.
// clusters/proxy reaches the members through members, the process's member
// cache (Pull ones through their agents' tunnels when its Tunnel is set).
// With tunnels, agents open their tunnels on clusters/tunnel.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter, members *member.Cache, tunnels *tunnel.Server, proxyOpts ...proxy.Option) (*genericapiserver.APIGroupInfo, error) {
	info := genericapiserver.NewDefaultAPIGroupInfo(clusterv1alpha1.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	clusters, status, err := clusterstorage.NewREST(scheme, opts)
	if err != nil {
		return nil, fmt.Errorf("cluster storage: %w", err)
	}
	getCluster := func(name string) (*clusterv1alpha1.Cluster, error) {
		obj, err := clusters.Get(context.Background(), name, fromCache)
		if err != nil {
			return nil, err
		}
		return obj.(*clusterv1alpha1.Cluster), nil
	}
	listClusters := func() ([]*clusterv1alpha1.Cluster, error) {
		obj, err := clusters.List(context.Background(), &metainternalversion.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		list := obj.(*clusterv1alpha1.ClusterList)
		out := make([]*clusterv1alpha1.Cluster, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		return out, nil
	}
	storage := map[string]rest.Storage{
		"clusters":        clusters,
		"clusters/status": status,
	}
	if tunnels != nil {
		storage["clusters/"+tunnel.Subresource] = tunnel.NewConnecter(tunnels, getCluster)
	}
	storage["clusters/proxy"] = proxy.NewConnecter(getCluster, members, listClusters, proxyOpts...)
	info.VersionedResourcesStorageMap[clusterv1alpha1.SchemeGroupVersion.Version] = storage
	return &info, nil
}
