// Package apps assembles the apps.karmada.io API group: WorkloadRebalancers.
package apps

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/apps/validation"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// Definitions returns the kinds of the group.
func Definitions() []*resource.Definition {
	return []*resource.Definition{{
		Resource: appsv1alpha1.Resource("workloadrebalancers"), Singular: "workloadrebalancer",
		Versions: []string{appsv1alpha1.SchemeGroupVersion.Version}, Status: true,
		New:            func() runtime.Object { return &appsv1alpha1.WorkloadRebalancer{} },
		NewList:        func() runtime.Object { return &appsv1alpha1.WorkloadRebalancerList{} },
		Validate:       resource.Validator(validation.ValidateWorkloadRebalancer),
		ValidateUpdate: resource.UpdateValidator(validation.ValidateWorkloadRebalancerUpdate),
		Columns: []metav1.TableColumnDefinition{
			{Name: "Workloads", Type: "integer", Description: "How many workloads it reschedules."},
			{Name: "Successful", Type: "integer", Description: "How many were rescheduled."},
			{Name: "Finished", Type: "date", Description: "When every workload had its result."},
		},
		Cells: func(obj runtime.Object) []any {
			r := obj.(*appsv1alpha1.WorkloadRebalancer)
			ok := 0
			for _, o := range r.Status.ObservedWorkloads {
				if o.Result == appsv1alpha1.RebalanceSuccessful {
					ok++
				}
			}
			finished := "<none>"
			if r.Status.FinishTime != nil {
				finished = resource.Age(*r.Status.FinishTime)
			}
			return []any{len(r.Spec.Workloads), ok, finished}
		},
	}}
}

// NewAPIGroupInfo returns the storage of every apps.karmada.io resource.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter) (*genericapiserver.APIGroupInfo, error) {
	return resource.NewAPIGroupInfo(scheme, codecs, opts, appsv1alpha1.SchemeGroupVersion, Definitions())
}
