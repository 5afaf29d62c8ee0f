package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the group of this API.
const GroupName = "flotilla.io"

// SchemeGroupVersion is the group and version of this API.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource returns a group-qualified resource of this API.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder registers the types of this API.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Types are the kinds of this API and their lists.
func Types() []runtime.Object {
	return []runtime.Object{&RolloutStrategy{}, &RolloutStrategyList{},
		&ResourceRevision{}, &ResourceRevisionList{}, &RolloutRun{}, &RolloutRunList{}, &PlacementExplanation{}, &PlacementReview{}}
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, Types()...)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
