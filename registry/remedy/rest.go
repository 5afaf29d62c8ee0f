// Package remedy assembles the remedy.karmada.io API group: Remedies.
package remedy

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"

	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/remedy/validation"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// Definitions returns the kinds of the group.
func Definitions() []*resource.Definition {
	return []*resource.Definition{{
		Resource: remedyv1alpha1.Resource("remedies"), Singular: "remedy",
		Versions: []string{remedyv1alpha1.SchemeGroupVersion.Version}, Categories: resource.KarmadaCategory,
		New:            func() runtime.Object { return &remedyv1alpha1.Remedy{} },
		NewList:        func() runtime.Object { return &remedyv1alpha1.RemedyList{} },
		Validate:       resource.Validator(validation.ValidateRemedy),
		ValidateUpdate: resource.UpdateValidator(validation.ValidateRemedyUpdate),
	}}
}

// NewAPIGroupInfo returns the storage of every remedy.karmada.io resource.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter) (*genericapiserver.APIGroupInfo, error) {
	return resource.NewAPIGroupInfo(scheme, codecs, opts, remedyv1alpha1.SchemeGroupVersion, Definitions())
}
