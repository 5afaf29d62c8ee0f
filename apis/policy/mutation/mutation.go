// Package mutation applies to policies what Karmada's mutating admission
// webhook does on create and update: the scheme defaults, selector namespaces,
// spread-constraint defaults, dependency propagation for ServiceImports, the
// Weighted division default, the failover grace period and, on create, the
// permanent id and the controller finalizer. The registry strategies call these
// functions before validation; they never fail and never read other objects.
package mutation

import (
	"slices"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// The MCS ServiceImport: propagating one requires its dependencies (the
// derived Service and EndpointSlices), so selecting it turns propagateDeps on.
var (
	serviceImportAPIVersion = multiclusterv1alpha1.SchemeGroupVersion.String()
	serviceImportKind       = multiclusterv1alpha1.ServiceImportKind
)

// MutatePropagationPolicy mutates pp in place. create says whether pp is being
// created: only then are the permanent-id label (a new UUID, unless one is
// already set) and the controller finalizer added.
func MutatePropagationPolicy(pp *policyv1alpha1.PropagationPolicy, create bool) {
	policyv1alpha1.SetObjectDefaults_PropagationPolicy(pp)
	for i := range pp.Spec.ResourceSelectors {
		if pp.Spec.ResourceSelectors[i].Namespace == "" {
			pp.Spec.ResourceSelectors[i].Namespace = pp.Namespace
		}
	}
	mutatePropagationSpec(&pp.Spec)
	if create {
		setPermanentID(&pp.ObjectMeta, policyv1alpha1.PropagationPolicyPermanentIDLabel)
		addFinalizer(&pp.ObjectMeta, policyv1alpha1.PropagationPolicyControllerFinalizer)
	}
}

// MutateClusterPropagationPolicy mutates cpp in place. create says whether cpp
// is being created: only then are the permanent-id label (a new UUID, unless
// one is already set) and the controller finalizer added. Selector namespaces
// are left alone: empty means every namespace.
func MutateClusterPropagationPolicy(cpp *policyv1alpha1.ClusterPropagationPolicy, create bool) {
	policyv1alpha1.SetObjectDefaults_ClusterPropagationPolicy(cpp)
	mutatePropagationSpec(&cpp.Spec)
	if create {
		setPermanentID(&cpp.ObjectMeta, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)
		addFinalizer(&cpp.ObjectMeta, policyv1alpha1.ClusterPropagationPolicyControllerFinalizer)
	}
}

// MutateOverridePolicy mutates op in place: selectors without a namespace get
// the policy's. It does the same on create and update.
func MutateOverridePolicy(op *policyv1alpha1.OverridePolicy) {
	for i := range op.Spec.ResourceSelectors {
		if op.Spec.ResourceSelectors[i].Namespace == "" {
			op.Spec.ResourceSelectors[i].Namespace = op.Namespace
		}
	}
}

// mutatePropagationSpec applies the effects shared by both propagation policies.
func mutatePropagationSpec(s *policyv1alpha1.PropagationSpec) {
	for i := range s.Placement.SpreadConstraints {
		sc := &s.Placement.SpreadConstraints[i]
		if sc.SpreadByField == "" && sc.SpreadByLabel == "" {
			sc.SpreadByField = policyv1alpha1.SpreadByFieldCluster
		}
		if sc.MinGroups == 0 {
			sc.MinGroups = 1
		}
	}
	if selectsServiceImport(s.ResourceSelectors) {
		s.PropagateDeps = true
	}
	if rs := s.Placement.ReplicaScheduling; rs != nil &&
		rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided && rs.ReplicaDivisionPreference == "" {
		rs.ReplicaDivisionPreference = policyv1alpha1.ReplicaDivisionPreferenceWeighted
	}
	if s.Failover != nil && s.Failover.Application != nil {
		app := s.Failover.Application
		graceful := app.PurgeMode == policyv1alpha1.PurgeModeGracefully || app.PurgeMode == policyv1alpha1.PurgeModeGraciously
		if graceful && app.GracePeriodSeconds == nil {
			grace := policyv1alpha1.DefaultGracePeriodSeconds
			app.GracePeriodSeconds = &grace
		}
	}
}

func selectsServiceImport(selectors []policyv1alpha1.ResourceSelector) bool {
	return slices.ContainsFunc(selectors, func(rs policyv1alpha1.ResourceSelector) bool {
		return rs.APIVersion == serviceImportAPIVersion && rs.Kind == serviceImportKind
	})
}

// setPermanentID sets label key to a new UUID unless it already has a value.
func setPermanentID(meta *metav1.ObjectMeta, key string) {
	if meta.Labels[key] != "" {
		return
	}
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	meta.Labels[key] = uuid.NewString()
}

func addFinalizer(meta *metav1.ObjectMeta, finalizer string) {
	if !slices.Contains(meta.Finalizers, finalizer) {
		meta.Finalizers = append(meta.Finalizers, finalizer)
	}
}
