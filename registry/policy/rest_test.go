package policy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/registry/internal/resource/resourcetest"
)

func TestStrategies(t *testing.T) {
	t.Parallel()
	pp := func(obj runtime.Object) *policyv1alpha1.PropagationPolicy {
		return obj.(*policyv1alpha1.PropagationPolicy)
	}
	cpp := func(obj runtime.Object) *policyv1alpha1.ClusterPropagationPolicy {
		return obj.(*policyv1alpha1.ClusterPropagationPolicy)
	}
	op := func(obj runtime.Object) *policyv1alpha1.OverridePolicy { return obj.(*policyv1alpha1.OverridePolicy) }
	cop := func(obj runtime.Object) *policyv1alpha1.ClusterOverridePolicy {
		return obj.(*policyv1alpha1.ClusterOverridePolicy)
	}
	frq := func(obj runtime.Object) *policyv1alpha1.FederatedResourceQuota {
		return obj.(*policyv1alpha1.FederatedResourceQuota)
	}
	ctp := func(obj runtime.Object) *policyv1alpha1.ClusterTaintPolicy {
		return obj.(*policyv1alpha1.ClusterTaintPolicy)
	}
	// The propagation policies' defaults: a permanent id and the
	// controller's finalizer on create, a divided placement's weighted
	// division.
	divided := `
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided}
`
	propagationDefaulted := func(labels map[string]string, finalizers []string, s *policyv1alpha1.PropagationSpec, id, finalizer string) bool {
		return labels[id] != "" && len(finalizers) == 1 && finalizers[0] == finalizer &&
			s.Placement.ReplicaScheduling.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceWeighted
	}
	resourcetest.Run(t, Definitions(), []resourcetest.Kind{
		{
			Resource: "propagationpolicies",
			Manifest: `
metadata: {name: nginx, namespace: default}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}` + divided,
			ChangeSpec:  func(obj runtime.Object) { pp(obj).Spec.Priority = ptr.To[int32](5) },
			Invalid:     func(obj runtime.Object) { pp(obj).Spec.ResourceSelectors = nil },
			InvalidPath: "spec.resourceSelectors",
			Defaulted: func(obj runtime.Object) bool {
				p := pp(obj)
				return propagationDefaulted(p.Labels, p.Finalizers, &p.Spec, policyv1alpha1.PropagationPolicyPermanentIDLabel,
					policyv1alpha1.PropagationPolicyControllerFinalizer) && p.Spec.ResourceSelectors[0].Namespace == "default"
			},
		},
		{
			Resource: "clusterpropagationpolicies",
			Manifest: `
metadata: {name: nginx}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}` + divided,
			ChangeSpec:  func(obj runtime.Object) { cpp(obj).Spec.Priority = ptr.To[int32](5) },
			Invalid:     func(obj runtime.Object) { cpp(obj).Spec.ResourceSelectors = nil },
			InvalidPath: "spec.resourceSelectors",
			Defaulted: func(obj runtime.Object) bool {
				p := cpp(obj)
				return propagationDefaulted(p.Labels, p.Finalizers, &p.Spec, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel,
					policyv1alpha1.ClusterPropagationPolicyControllerFinalizer)
			},
		},
		{
			Resource: "overridepolicies",
			Manifest: `
metadata: {name: nginx, namespace: default}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  overrideRules:
    - overriders:
        labelsOverrider: [{operator: add, value: {team: web}}]
`,
			ChangeSpec:  func(obj runtime.Object) { op(obj).Spec.ResourceSelectors[0].Name = "other" },
			Invalid:     func(obj runtime.Object) { op(obj).Spec.ResourceSelectors[0].APIVersion = "" },
			InvalidPath: "spec.resourceSelectors[0].apiVersion",
			Defaulted:   func(obj runtime.Object) bool { return op(obj).Spec.ResourceSelectors[0].Namespace == "default" },
		},
		{
			Resource: "clusteroverridepolicies",
			Manifest: `
metadata: {name: nginx}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  overrideRules:
    - overriders:
        labelsOverrider: [{operator: add, value: {team: web}}]
`,
			ChangeSpec:  func(obj runtime.Object) { cop(obj).Spec.ResourceSelectors[0].Name = "other" },
			Invalid:     func(obj runtime.Object) { cop(obj).Spec.ResourceSelectors[0].APIVersion = "" },
			InvalidPath: "spec.resourceSelectors[0].apiVersion",
		},
		{
			Resource: "federatedresourcequotas",
			Manifest: `
metadata: {name: team, namespace: default}
spec:
  overall: {cpu: "1"}
`,
			ChangeSpec: func(obj runtime.Object) { frq(obj).Spec.Overall[corev1.ResourceCPU] = resource.MustParse("2") },
			ChangeStatus: func(obj runtime.Object) {
				frq(obj).Status.OverallUsed = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
			},
			Invalid:     func(obj runtime.Object) { frq(obj).Spec.Overall = nil },
			InvalidPath: "spec.overall",
			InvalidStatus: func(obj runtime.Object) {
				frq(obj).Status.OverallUsed = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}
			},
			InvalidStatusPath: "status.overallUsed[cpu]",
		},
		{
			Resource: "clustertaintpolicies",
			Manifest: `
metadata: {name: not-ready}
spec:
  targetClusters: {clusterNames: [member1]}
  addOnConditions:
    - {conditionType: Ready, operator: In, statusValues: ["False"]}
  taints:
    - {key: not-ready, effect: NoSchedule}
`,
			ChangeSpec: func(obj runtime.Object) { ctp(obj).Spec.Taints[0].Key = "unready" },
			// NoExecute is not enabled on this control plane.
			Invalid:     func(obj runtime.Object) { ctp(obj).Spec.Taints[0].Effect = corev1.TaintEffectNoExecute },
			InvalidPath: "spec.taints[0].effect",
		},
	})
}
