// Package config assembles the config.karmada.io API group:
// ResourceInterpreterCustomizations, validated against each other, and
// ResourceInterpreterWebhookConfigurations.
package config

import (
	"fmt"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/config/validation"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// customizations lists the stored ResourceInterpreterCustomizations, for
// the check across them; list is set once their storage exists.
type customizations struct {
	list func() ([]*configv1alpha1.ResourceInterpreterCustomization, error)
}

// listFrom lists the customizations of store.
func listFrom(store *resource.REST) func() ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
	return func() ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
		obj, err := store.List(genericapirequest.NewContext(), &metainternalversion.ListOptions{})
		if err != nil {
			return nil, err
		}
		list := obj.(*configv1alpha1.ResourceInterpreterCustomizationList)
		out := make([]*configv1alpha1.ResourceInterpreterCustomization, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
		return out, nil
	}
}

// validateAgainstOthers adds the check that no other customization defines
// the same operation for the same target.
func (c *customizations) validateAgainstOthers(ric *configv1alpha1.ResourceInterpreterCustomization, errs field.ErrorList) field.ErrorList {
	if c.list == nil {
		return append(errs, field.InternalError(field.NewPath("spec", "customizations"),
			fmt.Errorf("the storage of resourceinterpretercustomizations is not ready")))
	}
	others, err := c.list()
	if err != nil {
		return append(errs, field.InternalError(field.NewPath("spec", "customizations"), err))
	}
	return append(errs, validation.ValidateNoDuplicateOperations(ric, others)...)
}

// definitions returns the kinds of the group; customizations are checked
// against those rics lists.
func definitions(rics *customizations) []*resource.Definition {
	v := []string{configv1alpha1.SchemeGroupVersion.Version}
	return []*resource.Definition{
		{
			Resource: configv1alpha1.Resource("resourceinterpretercustomizations"), Singular: "resourceinterpretercustomization", Versions: v,
			ShortNames: []string{"ric"}, Categories: resource.KarmadaCategory,
			New:     func() runtime.Object { return &configv1alpha1.ResourceInterpreterCustomization{} },
			NewList: func() runtime.Object { return &configv1alpha1.ResourceInterpreterCustomizationList{} },
			Validate: resource.Validator(func(ric *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
				return rics.validateAgainstOthers(ric, validation.ValidateResourceInterpreterCustomization(ric))
			}),
			ValidateUpdate: resource.UpdateValidator(func(ric, old *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
				return rics.validateAgainstOthers(ric, validation.ValidateResourceInterpreterCustomizationUpdate(ric, old))
			}),
			Columns: []metav1.TableColumnDefinition{
				{Name: "Target-API-Version", Type: "string", Description: "API version of the target kind."},
				{Name: "Target-Kind", Type: "string", Description: "The target kind."},
			},
			Cells: func(obj runtime.Object) []any {
				t := obj.(*configv1alpha1.ResourceInterpreterCustomization).Spec.Target
				return []any{t.APIVersion, t.Kind}
			},
		},
		{
			Resource: configv1alpha1.Resource("resourceinterpreterwebhookconfigurations"), Singular: "resourceinterpreterwebhookconfiguration", Versions: v,
			Categories:     resource.KarmadaCategory,
			New:            func() runtime.Object { return &configv1alpha1.ResourceInterpreterWebhookConfiguration{} },
			NewList:        func() runtime.Object { return &configv1alpha1.ResourceInterpreterWebhookConfigurationList{} },
			Validate:       resource.Validator(validation.ValidateResourceInterpreterWebhookConfiguration),
			ValidateUpdate: resource.UpdateValidator(validation.ValidateResourceInterpreterWebhookConfigurationUpdate),
		},
	}
}

// NewAPIGroupInfo returns the storage of every config.karmada.io resource.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter) (*genericapiserver.APIGroupInfo, error) {
	rics := &customizations{}
	gv := configv1alpha1.SchemeGroupVersion
	info, err := resource.NewAPIGroupInfo(scheme, codecs, opts, gv, definitions(rics))
	if err != nil {
		return nil, err
	}
	store, ok := info.VersionedResourcesStorageMap[gv.Version]["resourceinterpretercustomizations"].(*resource.REST)
	if !ok {
		return nil, fmt.Errorf("the resourceinterpretercustomizations storage is a %T", info.VersionedResourcesStorageMap[gv.Version]["resourceinterpretercustomizations"])
	}
	rics.list = listFrom(store)
	return info, nil
}
