// Package networking assembles the networking.karmada.io API group:
// MultiClusterIngresses and MultiClusterServices.
package networking

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/flotilla-io/flotilla/apis/networking/mutation"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/networking/validation"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// Definitions returns the kinds of the group.
func Definitions() []*resource.Definition {
	v := []string{networkingv1alpha1.SchemeGroupVersion.Version}
	return []*resource.Definition{
		{
			Resource: networkingv1alpha1.Resource("multiclusteringresses"), Singular: "multiclusteringress", Versions: v,
			NamespaceScoped: true, ShortNames: []string{"mci"}, Categories: resource.KarmadaCategory, Status: true,
			New:            func() runtime.Object { return &networkingv1alpha1.MultiClusterIngress{} },
			NewList:        func() runtime.Object { return &networkingv1alpha1.MultiClusterIngressList{} },
			Validate:       resource.Validator(validation.ValidateMultiClusterIngress),
			ValidateUpdate: resource.UpdateValidator(validation.ValidateMultiClusterIngressUpdate),
		},
		{
			Resource: networkingv1alpha1.Resource("multiclusterservices"), Singular: "multiclusterservice", Versions: v,
			NamespaceScoped: true, ShortNames: []string{"mcs"}, Categories: resource.KarmadaCategory, Status: true,
			New:     func() runtime.Object { return &networkingv1alpha1.MultiClusterService{} },
			NewList: func() runtime.Object { return &networkingv1alpha1.MultiClusterServiceList{} },
			Mutate: func(obj, old runtime.Object) {
				mutation.MutateMultiClusterService(obj.(*networkingv1alpha1.MultiClusterService), old == nil)
			},
			Validate:       resource.Validator(validation.ValidateMultiClusterService),
			ValidateUpdate: resource.UpdateValidator(validation.ValidateMultiClusterServiceUpdate),
		},
	}
}

// NewAPIGroupInfo returns the storage of every networking.karmada.io resource.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter) (*genericapiserver.APIGroupInfo, error) {
	return resource.NewAPIGroupInfo(scheme, codecs, opts, networkingv1alpha1.SchemeGroupVersion, Definitions())
}
