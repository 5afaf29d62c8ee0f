// Package autoscaling assembles the autoscaling.karmada.io API group:
// FederatedHPAs and CronFederatedHPAs.
package autoscaling

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/autoscaling/validation"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

var referenceColumns = []metav1.TableColumnDefinition{
	{Name: "Reference-Kind", Type: "string", Description: "Kind of the scale target."},
	{Name: "Reference-Name", Type: "string", Description: "Name of the scale target."},
}

// Definitions returns the kinds of the group, with Karmada's printer
// columns and short names.
func Definitions() []*resource.Definition {
	v := []string{autoscalingv1alpha1.SchemeGroupVersion.Version}
	return []*resource.Definition{
		{
			Resource: autoscalingv1alpha1.Resource("federatedhpas"), Singular: "federatedhpa", Versions: v,
			NamespaceScoped: true, ShortNames: []string{"fhpa"}, Categories: resource.KarmadaCategory, Status: true,
			New:                  func() runtime.Object { return &autoscalingv1alpha1.FederatedHPA{} },
			NewList:              func() runtime.Object { return &autoscalingv1alpha1.FederatedHPAList{} },
			Validate:             resource.Validator(validation.ValidateFederatedHPA),
			ValidateUpdate:       resource.UpdateValidator(validation.ValidateFederatedHPAUpdate),
			ValidateStatusUpdate: resource.UpdateValidator(validation.ValidateFederatedHPAStatusUpdate),
			Columns: append(append([]metav1.TableColumnDefinition{}, referenceColumns...),
				metav1.TableColumnDefinition{Name: "MinPods", Type: "integer", Description: "Lower bound of the replicas."},
				metav1.TableColumnDefinition{Name: "MaxPods", Type: "integer", Description: "Upper bound of the replicas."},
				metav1.TableColumnDefinition{Name: "Replicas", Type: "integer", Description: "Current replicas."}),
			Cells: func(obj runtime.Object) []any {
				f := obj.(*autoscalingv1alpha1.FederatedHPA)
				minPods := ""
				if f.Spec.MinReplicas != nil {
					minPods = strconv.Itoa(int(*f.Spec.MinReplicas))
				}
				return []any{f.Spec.ScaleTargetRef.Kind, f.Spec.ScaleTargetRef.Name, minPods, f.Spec.MaxReplicas, f.Status.CurrentReplicas}
			},
		},
		{
			Resource: autoscalingv1alpha1.Resource("cronfederatedhpas"), Singular: "cronfederatedhpa", Versions: v,
			NamespaceScoped: true, ShortNames: []string{"cronfhpa"}, Categories: resource.KarmadaCategory, Status: true,
			New:            func() runtime.Object { return &autoscalingv1alpha1.CronFederatedHPA{} },
			NewList:        func() runtime.Object { return &autoscalingv1alpha1.CronFederatedHPAList{} },
			Validate:       resource.Validator(validation.ValidateCronFederatedHPA),
			ValidateUpdate: resource.UpdateValidator(validation.ValidateCronFederatedHPAUpdate),
			Columns:        referenceColumns,
			Cells: func(obj runtime.Object) []any {
				r := obj.(*autoscalingv1alpha1.CronFederatedHPA).Spec.ScaleTargetRef
				return []any{r.Kind, r.Name}
			},
		},
	}
}

// NewAPIGroupInfo returns the storage of every autoscaling.karmada.io resource.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter) (*genericapiserver.APIGroupInfo, error) {
	return resource.NewAPIGroupInfo(scheme, codecs, opts, autoscalingv1alpha1.SchemeGroupVersion, Definitions())
}
