// Package install registers the autoscaling.karmada.io API in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

// Install registers v1alpha1 and, as the group serves one version, the same
// Go types as its internal version (no conversion needed).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(autoscalingv1alpha1.AddToScheme(scheme))
	internal := autoscalingv1alpha1.SchemeGroupVersion
	internal.Version = runtime.APIVersionInternal
	scheme.AddKnownTypes(internal, &autoscalingv1alpha1.FederatedHPA{}, &autoscalingv1alpha1.FederatedHPAList{}, &autoscalingv1alpha1.CronFederatedHPA{}, &autoscalingv1alpha1.CronFederatedHPAList{})
	utilruntime.Must(scheme.SetVersionPriority(autoscalingv1alpha1.SchemeGroupVersion))
}
