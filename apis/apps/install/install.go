// Package install registers the apps.karmada.io API in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
)

// Install registers v1alpha1 and, as the group serves one version, the same
// Go types as its internal version (no conversion needed).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	internal := appsv1alpha1.SchemeGroupVersion
	internal.Version = runtime.APIVersionInternal
	scheme.AddKnownTypes(internal, &appsv1alpha1.WorkloadRebalancer{}, &appsv1alpha1.WorkloadRebalancerList{})
	utilruntime.Must(scheme.SetVersionPriority(appsv1alpha1.SchemeGroupVersion))
}
