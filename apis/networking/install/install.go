// Package install registers the networking.karmada.io API in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
)

// Install registers v1alpha1 and, as the group serves one version, the same
// Go types as its internal version (no conversion needed).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(networkingv1alpha1.AddToScheme(scheme))
	internal := networkingv1alpha1.SchemeGroupVersion
	internal.Version = runtime.APIVersionInternal
	scheme.AddKnownTypes(internal, &networkingv1alpha1.MultiClusterIngress{}, &networkingv1alpha1.MultiClusterIngressList{}, &networkingv1alpha1.MultiClusterService{}, &networkingv1alpha1.MultiClusterServiceList{})
	utilruntime.Must(scheme.SetVersionPriority(networkingv1alpha1.SchemeGroupVersion))
}
