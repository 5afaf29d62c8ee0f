// Package policy assembles the policy.karmada.io API group.
package policy

import (
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/flotilla-io/flotilla/apis/policy/mutation"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/policy/validation"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

var (
	versions        = []string{policyv1alpha1.SchemeGroupVersion.Version}
	propagationCols = []metav1.TableColumnDefinition{
		{Name: "Conflict-Resolution", Type: "string", Description: "What happens when a propagated resource already exists in a member."},
		{Name: "Priority", Type: "string", Description: "Explicit priority among matching policies."},
	}
)

func propagationCells(s *policyv1alpha1.PropagationSpec) []any {
	priority := ""
	if s.Priority != nil {
		priority = strconv.Itoa(int(*s.Priority))
	}
	return []any{string(s.ConflictResolution), priority}
}

// Definitions returns the kinds of the group.
func Definitions(opts ...Option) []*resource.Definition {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return []*resource.Definition{
		{
			Resource: policyv1alpha1.Resource("propagationpolicies"), Singular: "propagationpolicy", Versions: versions,
			NamespaceScoped: true, ShortNames: []string{"pp"}, Categories: resource.KarmadaCategory,
			New:     func() runtime.Object { return &policyv1alpha1.PropagationPolicy{} },
			NewList: func() runtime.Object { return &policyv1alpha1.PropagationPolicyList{} },
			Mutate: func(obj, old runtime.Object) {
				mutation.MutatePropagationPolicy(obj.(*policyv1alpha1.PropagationPolicy), old == nil)
			},
			Validate: func(obj runtime.Object) field.ErrorList {
				return validation.ValidatePropagationPolicy(obj.(*policyv1alpha1.PropagationPolicy))
			},
			ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return validation.ValidatePropagationPolicyUpdate(obj.(*policyv1alpha1.PropagationPolicy), old.(*policyv1alpha1.PropagationPolicy))
			},
			Columns: propagationCols,
			Cells:   func(obj runtime.Object) []any { return propagationCells(&obj.(*policyv1alpha1.PropagationPolicy).Spec) },
		},
		{
			Resource: policyv1alpha1.Resource("clusterpropagationpolicies"), Singular: "clusterpropagationpolicy", Versions: versions,
			ShortNames: []string{"cpp"}, Categories: resource.KarmadaCategory,
			New:     func() runtime.Object { return &policyv1alpha1.ClusterPropagationPolicy{} },
			NewList: func() runtime.Object { return &policyv1alpha1.ClusterPropagationPolicyList{} },
			Mutate: func(obj, old runtime.Object) {
				mutation.MutateClusterPropagationPolicy(obj.(*policyv1alpha1.ClusterPropagationPolicy), old == nil)
			},
			Validate: func(obj runtime.Object) field.ErrorList {
				return validation.ValidateClusterPropagationPolicy(obj.(*policyv1alpha1.ClusterPropagationPolicy))
			},
			ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return validation.ValidateClusterPropagationPolicyUpdate(obj.(*policyv1alpha1.ClusterPropagationPolicy), old.(*policyv1alpha1.ClusterPropagationPolicy))
			},
			Columns: propagationCols,
			Cells: func(obj runtime.Object) []any {
				return propagationCells(&obj.(*policyv1alpha1.ClusterPropagationPolicy).Spec)
			},
		},
		{
			Resource: policyv1alpha1.Resource("overridepolicies"), Singular: "overridepolicy", Versions: versions,
			NamespaceScoped: true, ShortNames: []string{"op"}, Categories: resource.KarmadaCategory,
			New:     func() runtime.Object { return &policyv1alpha1.OverridePolicy{} },
			NewList: func() runtime.Object { return &policyv1alpha1.OverridePolicyList{} },
			Mutate:  func(obj, _ runtime.Object) { mutation.MutateOverridePolicy(obj.(*policyv1alpha1.OverridePolicy)) },
			Validate: func(obj runtime.Object) field.ErrorList {
				return validation.ValidateOverridePolicy(obj.(*policyv1alpha1.OverridePolicy))
			},
			ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return validation.ValidateOverridePolicyUpdate(obj.(*policyv1alpha1.OverridePolicy), old.(*policyv1alpha1.OverridePolicy))
			},
		},
		{
			Resource: policyv1alpha1.Resource("clusteroverridepolicies"), Singular: "clusteroverridepolicy", Versions: versions,
			ShortNames: []string{"cop"}, Categories: resource.KarmadaCategory,
			New:     func() runtime.Object { return &policyv1alpha1.ClusterOverridePolicy{} },
			NewList: func() runtime.Object { return &policyv1alpha1.ClusterOverridePolicyList{} },
			Validate: func(obj runtime.Object) field.ErrorList {
				return validation.ValidateClusterOverridePolicy(obj.(*policyv1alpha1.ClusterOverridePolicy))
			},
			ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return validation.ValidateClusterOverridePolicyUpdate(obj.(*policyv1alpha1.ClusterOverridePolicy), old.(*policyv1alpha1.ClusterOverridePolicy))
			},
		},
		{
			Resource: policyv1alpha1.Resource("federatedresourcequotas"), Singular: "federatedresourcequota", Versions: versions,
			NamespaceScoped: true, Categories: resource.KarmadaCategory, Status: true,
			New:     func() runtime.Object { return &policyv1alpha1.FederatedResourceQuota{} },
			NewList: func() runtime.Object { return &policyv1alpha1.FederatedResourceQuotaList{} },
			Validate: func(obj runtime.Object) field.ErrorList {
				return validation.ValidateFederatedResourceQuota(obj.(*policyv1alpha1.FederatedResourceQuota))
			},
			ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return validation.ValidateFederatedResourceQuotaUpdate(obj.(*policyv1alpha1.FederatedResourceQuota), old.(*policyv1alpha1.FederatedResourceQuota))
			},
			ValidateStatusUpdate: func(obj, old runtime.Object) field.ErrorList {
				return validation.ValidateFederatedResourceQuotaStatusUpdate(obj.(*policyv1alpha1.FederatedResourceQuota), old.(*policyv1alpha1.FederatedResourceQuota))
			},
			Columns: []metav1.TableColumnDefinition{
				{Name: "Overall", Type: "string", Description: "The overall limits."},
				{Name: "Overall_Used", Type: "string", Description: "What is used of them."},
			},
			Cells: func(obj runtime.Object) []any {
				q := obj.(*policyv1alpha1.FederatedResourceQuota)
				return []any{resourceList(q.Status.Overall), resourceList(q.Status.OverallUsed)}
			},
		},
		{
			Resource: policyv1alpha1.Resource("clustertaintpolicies"), Singular: "clustertaintpolicy", Versions: versions,
			New:     func() runtime.Object { return &policyv1alpha1.ClusterTaintPolicy{} },
			NewList: func() runtime.Object { return &policyv1alpha1.ClusterTaintPolicyList{} },
			// NoExecute taints are refused unless the taint manager runs.
			Validate: func(obj runtime.Object) field.ErrorList {
				return validation.ValidateClusterTaintPolicy(obj.(*policyv1alpha1.ClusterTaintPolicy), o.noExecute)
			},
			ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return validation.ValidateClusterTaintPolicyUpdate(obj.(*policyv1alpha1.ClusterTaintPolicy), old.(*policyv1alpha1.ClusterTaintPolicy), o.noExecute)
			},
			Columns: []metav1.TableColumnDefinition{{Name: "Taints", Type: "string", Description: "The taints the policy adds and removes (key=value:Effect)."}},
			Cells: func(obj runtime.Object) []any {
				p := obj.(*policyv1alpha1.ClusterTaintPolicy)
				parts := make([]string, len(p.Spec.Taints))
				for i, t := range p.Spec.Taints {
					parts[i] = t.Key + "=" + t.Value + ":" + string(t.Effect)
				}
				return []any{strings.Join(parts, ",")}
			},
		},
	}
}

// Option changes what the policy group accepts.
type Option func(*options)

type options struct{ noExecute bool }

// WithNoExecuteTaints accepts ClusterTaintPolicies with NoExecute taints:
// the taint manager runs (--enable-no-execute-taint-eviction) and evicts
// by them.
func WithNoExecuteTaints(enabled bool) Option { return func(o *options) { o.noExecute = enabled } }

// NewAPIGroupInfo returns the storage of every policy.karmada.io resource.
func NewAPIGroupInfo(scheme *runtime.Scheme, codecs serializer.CodecFactory, opts generic.RESTOptionsGetter, options ...Option) (*genericapiserver.APIGroupInfo, error) {
	info := genericapiserver.NewDefaultAPIGroupInfo(policyv1alpha1.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	storage, err := resource.Storage(scheme, opts, Definitions(options...))
	if err != nil {
		return nil, err
	}
	info.VersionedResourcesStorageMap[policyv1alpha1.SchemeGroupVersion.Version] = storage
	return &info, nil
}
