// Package rollout assembles the flotilla.io API group: RolloutStrategies.
package rollout

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/flotilla-io/flotilla/apis/flotilla/mutation"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/flotilla/validation"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// Definitions returns the kinds of the group.
func Definitions() []*resource.Definition {
	return []*resource.Definition{{
		Resource: flotillav1alpha1.Resource("rolloutstrategies"), Singular: "rolloutstrategy",
		Versions: []string{flotillav1alpha1.SchemeGroupVersion.Version}, Status: true, Categories: resource.FlotillaCategory,
		New:            func() runtime.Object { return &flotillav1alpha1.RolloutStrategy{} },
		NewList:        func() runtime.Object { return &flotillav1alpha1.RolloutStrategyList{} },
		Mutate:         func(obj, _ runtime.Object) { mutation.MutateRolloutStrategy(obj.(*flotillav1alpha1.RolloutStrategy)) },
		Validate:       resource.Validator(validation.ValidateRolloutStrategy),
		ValidateUpdate: resource.UpdateValidator(validation.ValidateRolloutStrategyUpdate),
		Columns:        []metav1.TableColumnDefinition{{Name: "Stages", Type: "integer", Description: "How many stages the rollout has."}},
		Cells: func(obj runtime.Object) []any {
			return []any{len(obj.(*flotillav1alpha1.RolloutStrategy).Spec.Stages)}
		},
	}}
}

// NewAPIGroupInfo returns the storage of every flotilla.io resource.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter) (*genericapiserver.APIGroupInfo, error) {
	return resource.NewAPIGroupInfo(scheme, codecs, opts, flotillav1alpha1.SchemeGroupVersion, Definitions())
}
