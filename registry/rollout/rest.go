// Package rollout assembles the flotilla.io API group: RolloutStrategies,
// the ResourceRevisions of templates under one, and their RolloutRuns.
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
	}, {
		Resource: flotillav1alpha1.Resource("resourcerevisions"), Singular: "resourcerevision",
		Versions: []string{flotillav1alpha1.SchemeGroupVersion.Version}, NamespaceScoped: true, Categories: resource.FlotillaCategory,
		New:            func() runtime.Object { return &flotillav1alpha1.ResourceRevision{} },
		NewList:        func() runtime.Object { return &flotillav1alpha1.ResourceRevisionList{} },
		Validate:       resource.Validator(validation.ValidateResourceRevision),
		ValidateUpdate: resource.UpdateValidator(validation.ValidateResourceRevisionUpdate),
		Columns: []metav1.TableColumnDefinition{
			{Name: "Resource", Type: "string", Description: "The template (kind/name)."},
			{Name: "Revision", Type: "integer", Description: "The revision's number."},
			{Name: "Hash", Type: "string", Description: "The hash of the template's content."},
		},
		Cells: func(obj runtime.Object) []any {
			r := obj.(*flotillav1alpha1.ResourceRevision)
			return []any{r.Resource.Kind + "/" + r.Resource.Name, r.Revision, r.Hash}
		},
	}, {
		Resource: flotillav1alpha1.Resource("rolloutruns"), Singular: "rolloutrun",
		Versions: []string{flotillav1alpha1.SchemeGroupVersion.Version}, NamespaceScoped: true, Status: true, Categories: resource.FlotillaCategory,
		New:            func() runtime.Object { return &flotillav1alpha1.RolloutRun{} },
		NewList:        func() runtime.Object { return &flotillav1alpha1.RolloutRunList{} },
		Validate:       resource.Validator(validation.ValidateRolloutRun),
		ValidateUpdate: resource.UpdateValidator(validation.ValidateRolloutRunUpdate),
		Columns: []metav1.TableColumnDefinition{
			{Name: "Resource", Type: "string", Description: "The template rolled out (kind/name)."},
			{Name: "Strategy", Type: "string", Description: "The RolloutStrategy followed."},
			{Name: "Stage", Type: "string", Description: "The stage in progress."},
			{Name: "Phase", Type: "string", Description: "Where the run is."},
		},
		Cells: func(obj runtime.Object) []any {
			r := obj.(*flotillav1alpha1.RolloutRun)
			return []any{r.Spec.Resource.Kind + "/" + r.Spec.Resource.Name, r.Spec.Strategy, r.Status.CurrentStage, string(r.Status.Phase)}
		},
	}}
}

// NewAPIGroupInfo returns the storage of every flotilla.io resource.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter) (*genericapiserver.APIGroupInfo, error) {
	return resource.NewAPIGroupInfo(scheme, codecs, opts, flotillav1alpha1.SchemeGroupVersion, Definitions())
}
