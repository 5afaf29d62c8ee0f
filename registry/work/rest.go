// Package work assembles the work.karmada.io API group: Works, and the
// bindings stored as v1alpha2 and also served, converted, as v1alpha1.
// ResourceBinding writes are held to the overall limits of the
// FederatedResourceQuotas of their namespace (quota.go), whoever writes
// them.
package work

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/apis/work/validation"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

var (
	bindingVers   = []string{workv1alpha2.SchemeGroupVersion.Version, workv1alpha1.SchemeGroupVersion.Version}
	bindingColumn = []metav1.TableColumnDefinition{
		{Name: "Scheduled", Type: "string", Description: "Status of the Scheduled condition."},
		{Name: "FullyApplied", Type: "string", Description: "Status of the FullyApplied condition."},
		{Name: "Evicting", Type: "string", Priority: 1, Description: "The clusters the workload is being evicted from (gracefulEvictionTasks), with the reasons (-o wide)."},
	}
)

// bindingCells are a binding's cells of bindingColumn.
func bindingCells(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) []any {
	evicting := make([]string, 0, len(spec.GracefulEvictionTasks))
	for _, t := range spec.GracefulEvictionTasks {
		evicting = append(evicting, t.FromCluster+"("+t.Reason+")")
	}
	e := "<none>"
	if len(evicting) > 0 {
		e = strings.Join(evicting, ",")
	}
	return []any{resource.ConditionStatus(status.Conditions, workv1alpha2.Scheduled), resource.ConditionStatus(status.Conditions, workv1alpha2.FullyApplied), e}
}

func workDefinition() *resource.Definition {
	return &resource.Definition{
		Resource: workv1alpha1.Resource("works"), Singular: "work", Versions: []string{workv1alpha1.SchemeGroupVersion.Version},
		NamespaceScoped: true, ShortNames: []string{"wk"}, Categories: resource.KarmadaCategory, Status: true,
		New:     func() runtime.Object { return &workv1alpha1.Work{} },
		NewList: func() runtime.Object { return &workv1alpha1.WorkList{} },
		// Unreadable manifests are left for validation to report with their path.
		Mutate:               func(obj, old runtime.Object) { _ = mutation.MutateWork(obj.(*workv1alpha1.Work), old == nil) },
		Validate:             resource.Validator(validation.ValidateWork),
		ValidateUpdate:       resource.UpdateValidator(validation.ValidateWorkUpdate),
		ValidateStatusUpdate: resource.UpdateValidator(validation.ValidateWorkStatusUpdate),
		Columns: []metav1.TableColumnDefinition{
			{Name: "Workload-Kind", Type: "string", Description: "Kinds of the manifests."},
			{Name: "Applied", Type: "string", Description: "Status of the Applied condition."},
		},
		Cells: func(obj runtime.Object) []any {
			w := obj.(*workv1alpha1.Work)
			kinds := make([]string, 0, len(w.Spec.Workload.Manifests))
			for _, m := range w.Spec.Workload.Manifests {
				var tm metav1.TypeMeta
				if m.Object != nil {
					tm.Kind = m.Object.GetObjectKind().GroupVersionKind().Kind
				} else {
					_ = json.Unmarshal(m.Raw, &tm)
				}
				kinds = append(kinds, tm.Kind)
			}
			return []any{strings.Join(kinds, ","), resource.ConditionStatus(w.Status.Conditions, workv1alpha1.WorkApplied)}
		},
	}
}

// Uncached are the resources flotilla-apiserver serves without a watch
// cache by default (its --watch-cache-sizes): the objects the controllers'
// informers hold, each of them, already. A watch cache would keep a third
// copy in the process, and during a burst of status writes its event
// history holds every version of the last 75 seconds (with 15,000 Works,
// a gigabyte of peak memory). Their watchers are few (the controllers, one
// per Pull agent on its own namespace), each an etcd watch of its own.
func Uncached() []schema.GroupResource {
	out := []schema.GroupResource{workDefinition().Resource}
	for _, d := range bindingDefinitions() {
		out = append(out, d.Resource)
	}
	return out
}

func bindingDefinitions() []*resource.Definition {
	return []*resource.Definition{
		{
			Resource: workv1alpha2.Resource("resourcebindings"), Singular: "resourcebinding", Versions: bindingVers,
			NamespaceScoped: true, ShortNames: []string{"rb"}, Categories: resource.KarmadaCategory, Status: true,
			New:     func() runtime.Object { return &workv1alpha2.ResourceBinding{} },
			NewList: func() runtime.Object { return &workv1alpha2.ResourceBindingList{} },
			Mutate: func(obj, old runtime.Object) {
				_ = mutation.MutateResourceBinding(obj.(*workv1alpha2.ResourceBinding), old == nil)
			},
			Validate:             resource.Validator(validation.ValidateResourceBinding),
			ValidateUpdate:       resource.UpdateValidator(validation.ValidateResourceBindingUpdate),
			ValidateStatusUpdate: resource.UpdateValidator(validation.ValidateResourceBindingStatusUpdate),
			Columns:              bindingColumn,
			Cells: func(obj runtime.Object) []any {
				b := obj.(*workv1alpha2.ResourceBinding)
				return bindingCells(&b.Spec, &b.Status)
			},
		},
		{
			Resource: workv1alpha2.Resource("clusterresourcebindings"), Singular: "clusterresourcebinding", Versions: bindingVers,
			ShortNames: []string{"crb"}, Categories: resource.KarmadaCategory, Status: true,
			New:     func() runtime.Object { return &workv1alpha2.ClusterResourceBinding{} },
			NewList: func() runtime.Object { return &workv1alpha2.ClusterResourceBindingList{} },
			Mutate: func(obj, old runtime.Object) {
				_ = mutation.MutateClusterResourceBinding(obj.(*workv1alpha2.ClusterResourceBinding), old == nil)
			},
			Validate:             resource.Validator(validation.ValidateClusterResourceBinding),
			ValidateUpdate:       resource.UpdateValidator(validation.ValidateClusterResourceBindingUpdate),
			ValidateStatusUpdate: resource.UpdateValidator(validation.ValidateClusterResourceBindingStatusUpdate),
			Columns:              bindingColumn,
			Cells: func(obj runtime.Object) []any {
				b := obj.(*workv1alpha2.ClusterResourceBinding)
				return bindingCells(&b.Spec, &b.Status)
			},
		},
	}
}

// NewAPIGroupInfo returns the storage of every work.karmada.io resource.
// The same binding storage serves v1alpha2 and, converted, v1alpha1.
// ResourceBinding writes are checked against the FederatedResourceQuotas
// quotas lists (see quotaCheck), serialized across replicas by shared
// (nil: within this process only).
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter, quotas QuotaLister, shared NamespaceLock) (*genericapiserver.APIGroupInfo, error) {
	info := genericapiserver.NewDefaultAPIGroupInfo(workv1alpha2.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	works, err := resource.Storage(scheme, opts, []*resource.Definition{workDefinition()})
	if err != nil {
		return nil, err
	}
	bindings, err := resource.Storage(scheme, opts, bindingDefinitions())
	if err != nil {
		return nil, err
	}
	// Each binding kind has a scheduling subresource; the ResourceBindings'
	// writes, through either, pass the same quota guard.
	for _, def := range bindingDefinitions() {
		name := def.Resource.Resource
		main, ok := bindings[name].(*resource.REST)
		if !ok {
			return nil, fmt.Errorf("the %s storage is a %T", name, bindings[name])
		}
		scheduling, ok := newSchedulingREST(main)
		if !ok {
			return nil, fmt.Errorf("the %s storage has no binding strategy", name)
		}
		bindings[name+"/"+workv1alpha2.SchedulingSubresource] = scheduling
		if name == "resourcebindings" {
			guard := newQuotaGuard(main, quotas, shared)
			bindings[name] = &quotaGuardedREST{REST: main, guard: guard}
			bindings[name+"/"+workv1alpha2.SchedulingSubresource] = &quotaGuardedScheduling{StatusREST: scheduling, guard: guard}
		}
	}
	v1 := map[string]rest.Storage{}
	for k, v := range works {
		v1[k] = v
	}
	for k, v := range bindings {
		v1[k] = v
	}
	info.VersionedResourcesStorageMap[workv1alpha1.SchemeGroupVersion.Version] = v1
	info.VersionedResourcesStorageMap[workv1alpha2.SchemeGroupVersion.Version] = bindings
	return &info, nil
}
