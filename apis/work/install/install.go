// Package install registers the work.karmada.io API in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Install registers v1alpha1 and v1alpha2. The internal version reuses the
// Go types of the storage versions: v1alpha1 for Works (served only there)
// and v1alpha2 for the bindings, which v1alpha1 converts to and from.
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(workv1alpha1.AddToScheme(scheme))
	utilruntime.Must(workv1alpha2.AddToScheme(scheme))
	internal := workv1alpha2.SchemeGroupVersion
	internal.Version = runtime.APIVersionInternal
	scheme.AddKnownTypes(internal,
		&workv1alpha1.Work{}, &workv1alpha1.WorkList{},
		&workv1alpha2.ResourceBinding{}, &workv1alpha2.ResourceBindingList{},
		&workv1alpha2.ClusterResourceBinding{}, &workv1alpha2.ClusterResourceBindingList{},
	)
	utilruntime.Must(scheme.SetVersionPriority(workv1alpha2.SchemeGroupVersion, workv1alpha1.SchemeGroupVersion))
}
