// Package install registers the flotilla.io API in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// Install registers v1alpha1 and, as the group serves one version, the same
// Go types as its internal version (no conversion needed).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(flotillav1alpha1.AddToScheme(scheme))
	internal := flotillav1alpha1.SchemeGroupVersion
	internal.Version = runtime.APIVersionInternal
	scheme.AddKnownTypes(internal, flotillav1alpha1.Types()...)
	utilruntime.Must(scheme.SetVersionPriority(flotillav1alpha1.SchemeGroupVersion))
}
