// Package install registers the config.karmada.io API in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
)

// Install registers v1alpha1 and, as the group serves one version, the same
// Go types as its internal version (no conversion needed).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(configv1alpha1.AddToScheme(scheme))
	internal := configv1alpha1.SchemeGroupVersion
	internal.Version = runtime.APIVersionInternal
	scheme.AddKnownTypes(internal, &configv1alpha1.ResourceInterpreterCustomization{}, &configv1alpha1.ResourceInterpreterCustomizationList{}, &configv1alpha1.ResourceInterpreterWebhookConfiguration{}, &configv1alpha1.ResourceInterpreterWebhookConfigurationList{}, &configv1alpha1.ResourceInterpreterContext{})
	utilruntime.Must(scheme.SetVersionPriority(configv1alpha1.SchemeGroupVersion))
}
