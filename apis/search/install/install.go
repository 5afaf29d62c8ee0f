// Package install registers the search.karmada.io API in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

// Install registers v1alpha1 and, as the group serves one version, the same
// Go types as its internal version (no conversion needed).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(searchv1alpha1.AddToScheme(scheme))
	internal := searchv1alpha1.SchemeGroupVersion
	internal.Version = runtime.APIVersionInternal
	scheme.AddKnownTypes(internal, &searchv1alpha1.ResourceRegistry{}, &searchv1alpha1.ResourceRegistryList{}, &searchv1alpha1.Search{}, &searchv1alpha1.Proxying{})
	utilruntime.Must(scheme.SetVersionPriority(searchv1alpha1.SchemeGroupVersion))
}
