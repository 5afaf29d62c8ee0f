// Package install registers the cluster.karmada.io API in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// Install registers v1alpha1 and, as the group serves one version, the same
// Go types as its internal version (no conversion needed).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(clusterv1alpha1.AddToScheme(scheme))
	internal := clusterv1alpha1.SchemeGroupVersion
	internal.Version = runtime.APIVersionInternal
	scheme.AddKnownTypes(internal, &clusterv1alpha1.Cluster{}, &clusterv1alpha1.ClusterList{}, &clusterv1alpha1.ClusterProxyOptions{})
	utilruntime.Must(scheme.SetVersionPriority(clusterv1alpha1.SchemeGroupVersion))
}
