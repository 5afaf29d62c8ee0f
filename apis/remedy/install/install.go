// Package install registers the remedy.karmada.io API in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
)

// Install registers v1alpha1 and, as the group serves one version, the same
// Go types as its internal version (no conversion needed).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(remedyv1alpha1.AddToScheme(scheme))
	internal := remedyv1alpha1.SchemeGroupVersion
	internal.Version = runtime.APIVersionInternal
	scheme.AddKnownTypes(internal, &remedyv1alpha1.Remedy{}, &remedyv1alpha1.RemedyList{})
	utilruntime.Must(scheme.SetVersionPriority(remedyv1alpha1.SchemeGroupVersion))
}
