package registry

import (
	"fmt"
	"strconv"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
	appsvalidation "github.com/flotilla-io/flotilla/apis/apps/validation"
	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	autoscalingvalidation "github.com/flotilla-io/flotilla/apis/autoscaling/validation"
	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	configvalidation "github.com/flotilla-io/flotilla/apis/config/validation"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	networkingvalidation "github.com/flotilla-io/flotilla/apis/networking/validation"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
	remedyvalidation "github.com/flotilla-io/flotilla/apis/remedy/validation"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	searchvalidation "github.com/flotilla-io/flotilla/apis/search/validation"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// The groups whose kinds follow the common pattern entirely, each served in
// v1alpha1. Karmada's printer columns and short names are reproduced.
var karmadaCategory = []string{"karmada-io"}

var referenceColumns = []metav1.TableColumnDefinition{
	{Name: "Reference-Kind", Type: "string", Description: "Kind of the scale target."},
	{Name: "Reference-Name", Type: "string", Description: "Name of the scale target."},
}

// customizationsLister lists the stored ResourceInterpreterCustomizations,
// for the admission check across them; set once their storage exists.
type customizationsLister struct {
	store *resource.REST
}

func (l *customizationsLister) list() ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
	if l.store == nil {
		return nil, fmt.Errorf("the storage of resourceinterpretercustomizations is not ready")
	}
	obj, err := l.store.List(genericapirequest.NewContext(), &metainternalversion.ListOptions{})
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

// validateAgainstOthers adds the check that no other customization defines
// the same operation for the same target.
func (l *customizationsLister) validateAgainstOthers(ric *configv1alpha1.ResourceInterpreterCustomization, errs field.ErrorList) field.ErrorList {
	others, err := l.list()
	if err != nil {
		return append(errs, field.InternalError(field.NewPath("spec", "customizations"), err))
	}
	return append(errs, configvalidation.ValidateNoDuplicateOperations(ric, others)...)
}

func configDefinitions(rics *customizationsLister) []*resource.Definition {
	v := []string{"v1alpha1"}
	return []*resource.Definition{
		{
			Resource: configv1alpha1.Resource("resourceinterpretercustomizations"), Singular: "resourceinterpretercustomization", Versions: v,
			ShortNames: []string{"ric"}, Categories: karmadaCategory,
			New:     func() runtime.Object { return &configv1alpha1.ResourceInterpreterCustomization{} },
			NewList: func() runtime.Object { return &configv1alpha1.ResourceInterpreterCustomizationList{} },
			Validate: resource.Validator(func(ric *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
				return rics.validateAgainstOthers(ric, configvalidation.ValidateResourceInterpreterCustomization(ric))
			}),
			ValidateUpdate: resource.UpdateValidator(func(ric, old *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
				return rics.validateAgainstOthers(ric, configvalidation.ValidateResourceInterpreterCustomizationUpdate(ric, old))
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
			Categories:     karmadaCategory,
			New:            func() runtime.Object { return &configv1alpha1.ResourceInterpreterWebhookConfiguration{} },
			NewList:        func() runtime.Object { return &configv1alpha1.ResourceInterpreterWebhookConfigurationList{} },
			Validate:       resource.Validator(configvalidation.ValidateResourceInterpreterWebhookConfiguration),
			ValidateUpdate: resource.UpdateValidator(configvalidation.ValidateResourceInterpreterWebhookConfigurationUpdate),
		},
	}
}

func autoscalingDefinitions() []*resource.Definition {
	v := []string{"v1alpha1"}
	return []*resource.Definition{
		{
			Resource: autoscalingv1alpha1.Resource("federatedhpas"), Singular: "federatedhpa", Versions: v,
			NamespaceScoped: true, ShortNames: []string{"fhpa"}, Categories: karmadaCategory, Status: true,
			New:                  func() runtime.Object { return &autoscalingv1alpha1.FederatedHPA{} },
			NewList:              func() runtime.Object { return &autoscalingv1alpha1.FederatedHPAList{} },
			Validate:             resource.Validator(autoscalingvalidation.ValidateFederatedHPA),
			ValidateUpdate:       resource.UpdateValidator(autoscalingvalidation.ValidateFederatedHPAUpdate),
			ValidateStatusUpdate: resource.UpdateValidator(autoscalingvalidation.ValidateFederatedHPAStatusUpdate),
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
			NamespaceScoped: true, ShortNames: []string{"cronfhpa"}, Categories: karmadaCategory, Status: true,
			New:            func() runtime.Object { return &autoscalingv1alpha1.CronFederatedHPA{} },
			NewList:        func() runtime.Object { return &autoscalingv1alpha1.CronFederatedHPAList{} },
			Validate:       resource.Validator(autoscalingvalidation.ValidateCronFederatedHPA),
			ValidateUpdate: resource.UpdateValidator(autoscalingvalidation.ValidateCronFederatedHPAUpdate),
			Columns:        referenceColumns,
			Cells: func(obj runtime.Object) []any {
				r := obj.(*autoscalingv1alpha1.CronFederatedHPA).Spec.ScaleTargetRef
				return []any{r.Kind, r.Name}
			},
		},
	}
}

func searchDefinitions() []*resource.Definition {
	return []*resource.Definition{{
		Resource: searchv1alpha1.Resource("resourceregistries"), Singular: "resourceregistry", Versions: []string{"v1alpha1"}, Status: true,
		New:                  func() runtime.Object { return &searchv1alpha1.ResourceRegistry{} },
		NewList:              func() runtime.Object { return &searchv1alpha1.ResourceRegistryList{} },
		Validate:             resource.Validator(searchvalidation.ValidateResourceRegistry),
		ValidateUpdate:       resource.UpdateValidator(searchvalidation.ValidateResourceRegistryUpdate),
		ValidateStatusUpdate: resource.UpdateValidator(searchvalidation.ValidateResourceRegistryStatusUpdate),
	}}
}

func networkingDefinitions() []*resource.Definition {
	v := []string{"v1alpha1"}
	return []*resource.Definition{
		{
			Resource: networkingv1alpha1.Resource("multiclusteringresses"), Singular: "multiclusteringress", Versions: v,
			NamespaceScoped: true, ShortNames: []string{"mci"}, Categories: karmadaCategory, Status: true,
			New:            func() runtime.Object { return &networkingv1alpha1.MultiClusterIngress{} },
			NewList:        func() runtime.Object { return &networkingv1alpha1.MultiClusterIngressList{} },
			Validate:       resource.Validator(networkingvalidation.ValidateMultiClusterIngress),
			ValidateUpdate: resource.UpdateValidator(networkingvalidation.ValidateMultiClusterIngressUpdate),
		},
		{
			Resource: networkingv1alpha1.Resource("multiclusterservices"), Singular: "multiclusterservice", Versions: v,
			NamespaceScoped: true, ShortNames: []string{"mcs"}, Categories: karmadaCategory, Status: true,
			New:            func() runtime.Object { return &networkingv1alpha1.MultiClusterService{} },
			NewList:        func() runtime.Object { return &networkingv1alpha1.MultiClusterServiceList{} },
			Validate:       resource.Validator(networkingvalidation.ValidateMultiClusterService),
			ValidateUpdate: resource.UpdateValidator(networkingvalidation.ValidateMultiClusterServiceUpdate),
		},
	}
}

func appsDefinitions() []*resource.Definition {
	return []*resource.Definition{{
		Resource: appsv1alpha1.Resource("workloadrebalancers"), Singular: "workloadrebalancer", Versions: []string{"v1alpha1"}, Status: true,
		New:            func() runtime.Object { return &appsv1alpha1.WorkloadRebalancer{} },
		NewList:        func() runtime.Object { return &appsv1alpha1.WorkloadRebalancerList{} },
		Validate:       resource.Validator(appsvalidation.ValidateWorkloadRebalancer),
		ValidateUpdate: resource.UpdateValidator(appsvalidation.ValidateWorkloadRebalancerUpdate),
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

func remedyDefinitions() []*resource.Definition {
	return []*resource.Definition{{
		Resource: remedyv1alpha1.Resource("remedies"), Singular: "remedy", Versions: []string{"v1alpha1"}, Categories: karmadaCategory,
		New:            func() runtime.Object { return &remedyv1alpha1.Remedy{} },
		NewList:        func() runtime.Object { return &remedyv1alpha1.RemedyList{} },
		Validate:       resource.Validator(remedyvalidation.ValidateRemedy),
		ValidateUpdate: resource.UpdateValidator(remedyvalidation.ValidateRemedyUpdate),
	}}
}
