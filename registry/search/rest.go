// Package search assembles the storage of the search.karmada.io API group:
// ResourceRegistries. The search and proxying endpoints over the member
// caches they drive are search/'s, added beside them by the server.
package search

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/search/validation"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// Definitions returns the kinds of the group.
func Definitions() []*resource.Definition {
	return []*resource.Definition{{
		Resource: searchv1alpha1.Resource("resourceregistries"), Singular: "resourceregistry",
		Versions: []string{searchv1alpha1.SchemeGroupVersion.Version}, Status: true,
		New:                  func() runtime.Object { return &searchv1alpha1.ResourceRegistry{} },
		NewList:              func() runtime.Object { return &searchv1alpha1.ResourceRegistryList{} },
		Validate:             resource.Validator(validation.ValidateResourceRegistry),
		ValidateUpdate:       resource.UpdateValidator(validation.ValidateResourceRegistryUpdate),
		ValidateStatusUpdate: resource.UpdateValidator(validation.ValidateResourceRegistryStatusUpdate),
	}}
}

// NewAPIGroupInfo returns the storage of the search.karmada.io kinds.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter) (*genericapiserver.APIGroupInfo, error) {
	return resource.NewAPIGroupInfo(scheme, codecs, opts, searchv1alpha1.SchemeGroupVersion, Definitions())
}
