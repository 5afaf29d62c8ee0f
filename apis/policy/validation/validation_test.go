package validation

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/apis/policy/mutation"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// checkErrors compares errs with want, a list of "<field>: <error type>"
// strings, ignoring order; every error must be expected.
func checkErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	got := make([]string, 0, len(errs))
	for _, e := range errs {
		got = append(got, fmt.Sprintf("%s: %s", e.Field, e.Type))
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n  got  %q\n  want %q\nfull: %v", got, want, errs.ToAggregate())
	}
	for _, e := range errs {
		if e.Type != field.ErrorTypeDuplicate && e.Type != field.ErrorTypeNotSupported && e.Type != field.ErrorTypeTooLong &&
			e.Detail == "" && e.Type != field.ErrorTypeRequired {
			t.Errorf("error %v has no message", e)
		}
	}
}

const (
	ppIDLabel  = "metadata.labels[" + policyv1alpha1.PropagationPolicyPermanentIDLabel + "]"
	cppIDLabel = "metadata.labels[" + policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel + "]"
)

// validPP returns the policy of samples/nginx-propagation.yaml after
// create mutation, changed by mods.
func validPP(mods ...func(*policyv1alpha1.PropagationPolicy)) *policyv1alpha1.PropagationPolicy {
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-propagation", Namespace: "default"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
			},
		},
	}
	mutation.MutatePropagationPolicy(pp, true)
	for _, m := range mods {
		m(pp)
	}
	return pp
}

func fieldReq(key string, op corev1.NodeSelectorOperator) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: []string{"x"}}
}

func divided(pref policyv1alpha1.ReplicaDivisionPreference, dynamic policyv1alpha1.DynamicWeightFactor) *policyv1alpha1.ReplicaSchedulingStrategy {
	rs := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: pref}
	if dynamic != "" {
		rs.WeightPreference = &policyv1alpha1.ClusterPreferences{DynamicWeight: dynamic}
	}
	return rs
}

// terms returns two valid cluster groups, the first with an overflow group.
func terms() []policyv1alpha1.ClusterAffinityTerm {
	return []policyv1alpha1.ClusterAffinityTerm{
		{
			AffinityName:    "local-clusters",
			ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			OverflowAffinities: []policyv1alpha1.OverflowClusterAffinity{
				{AffinityName: "cloud-burst", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}},
			},
		},
		{AffinityName: "cloud-clusters", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
	}
}

func appFailover(mod func(*policyv1alpha1.ApplicationFailoverBehavior)) func(*policyv1alpha1.PropagationPolicy) {
	return func(pp *policyv1alpha1.PropagationPolicy) {
		pp.Spec.PropagateDeps = true
		app := &policyv1alpha1.ApplicationFailoverBehavior{
			DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](300)},
			PurgeMode:          policyv1alpha1.PurgeModeGracefully,
			GracePeriodSeconds: ptr.To[int32](600),
		}
		mod(app)
		pp.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: app}
	}
}

func TestValidatePropagationPolicy(t *testing.T) {
	t.Parallel()
	type mod = func(*policyv1alpha1.PropagationPolicy)
	tests := []struct {
		name string
		mod  mod
		want []string
	}{
		{name: "valid sample policy", mod: func(*policyv1alpha1.PropagationPolicy) {}},

		// metadata
		{name: "invalid name", mod: func(pp *policyv1alpha1.PropagationPolicy) { pp.Name = "Nginx_Propagation" },
			want: []string{"metadata.name: Invalid value"}},
		{name: "namespace required", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Namespace = ""
			pp.Spec.ResourceSelectors[0].Namespace = ""
		}, want: []string{"metadata.namespace: Required value"}},
		{name: "permanent id required", mod: func(pp *policyv1alpha1.PropagationPolicy) { pp.Labels = nil },
			want: []string{ppIDLabel + ": Required value"}},

		// resource selectors
		{name: "selector in another namespace", mod: func(pp *policyv1alpha1.PropagationPolicy) { pp.Spec.ResourceSelectors[0].Namespace = "other" },
			want: []string{"spec.resourceSelectors[0].namespace: Invalid value"}},
		{name: "no selectors", mod: func(pp *policyv1alpha1.PropagationPolicy) { pp.Spec.ResourceSelectors = nil },
			want: []string{"spec.resourceSelectors: Required value"}},
		{name: "selector without apiVersion and kind", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.ResourceSelectors[0].APIVersion, pp.Spec.ResourceSelectors[0].Kind = "", ""
		}, want: []string{"spec.resourceSelectors[0].apiVersion: Required value", "spec.resourceSelectors[0].kind: Required value"}},
		{name: "selector with malformed apiVersion", mod: func(pp *policyv1alpha1.PropagationPolicy) { pp.Spec.ResourceSelectors[0].APIVersion = "a/b/c" },
			want: []string{"spec.resourceSelectors[0].apiVersion: Invalid value"}},
		{name: "selector with invalid label selector", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.ResourceSelectors[0].LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "x"}}
		}, want: []string{"spec.resourceSelectors[0].labelSelector.matchLabels: Invalid value"}},
		{name: "preemption Always needs named selectors", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Preemption = policyv1alpha1.PreemptAlways
			pp.Spec.ResourceSelectors = append(pp.Spec.ResourceSelectors, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap"})
		}, want: []string{"spec.resourceSelectors[1].name: Required value"}},

		// enums
		{name: "unknown preemption", mod: func(pp *policyv1alpha1.PropagationPolicy) { pp.Spec.Preemption = "Sometimes" },
			want: []string{"spec.preemption: Unsupported value"}},
		{name: "unknown conflictResolution", mod: func(pp *policyv1alpha1.PropagationPolicy) { pp.Spec.ConflictResolution = "Merge" },
			want: []string{"spec.conflictResolution: Unsupported value"}},
		{name: "unknown activationPreference", mod: func(pp *policyv1alpha1.PropagationPolicy) { pp.Spec.ActivationPreference = "Eager" },
			want: []string{"spec.activationPreference: Unsupported value"}},

		// cluster affinity
		{name: "clusterAffinity and clusterAffinities", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinities = terms()[1:]
		}, want: []string{"spec.placement.clusterAffinities: Forbidden"}},
		{name: "field selector key and operator", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity.FieldSelector = &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
				fieldReq("provider", corev1.NodeSelectorOpIn), fieldReq("rack", corev1.NodeSelectorOpIn), fieldReq("zone", corev1.NodeSelectorOpExists),
			}}
		}, want: []string{
			"spec.placement.clusterAffinity.fieldSelector.matchExpressions[1].key: Unsupported value",
			"spec.placement.clusterAffinity.fieldSelector.matchExpressions[2].operator: Unsupported value",
		}},
		{name: "invalid cluster label selector", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "location", Operator: "Near"}}}
		}, want: []string{"spec.placement.clusterAffinity.labelSelector.matchExpressions[0].operator: Invalid value"}},

		// cluster affinity terms
		{name: "valid terms with overflow and Aggregated", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity = nil
			pp.Spec.Placement.ClusterAffinities = terms()
			pp.Spec.Placement.ReplicaScheduling = divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated, "")
		}},
		{name: "valid terms with overflow and dynamic weight", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity = nil
			pp.Spec.Placement.ClusterAffinities = terms()
			pp.Spec.Placement.ReplicaScheduling = divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, policyv1alpha1.DynamicWeightByAvailableReplicas)
		}},
		{name: "affinity names: duplicate, missing, too long, not a label key", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity = nil
			pp.Spec.Placement.ClusterAffinities = []policyv1alpha1.ClusterAffinityTerm{
				{AffinityName: "group"}, {AffinityName: "group"}, {}, {AffinityName: strings.Repeat("g", 33)}, {AffinityName: "bad name"},
			}
		}, want: []string{
			"spec.placement.clusterAffinities[1].affinityName: Duplicate value",
			"spec.placement.clusterAffinities[2].affinityName: Required value",
			"spec.placement.clusterAffinities[3].affinityName: Too long",
			"spec.placement.clusterAffinities[4].affinityName: Invalid value",
		}},
		{name: "term field selector is validated inline", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity = nil
			pp.Spec.Placement.ClusterAffinities = terms()[1:]
			pp.Spec.Placement.ClusterAffinities[0].FieldSelector = &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{fieldReq("rack", corev1.NodeSelectorOpIn)}}
		}, want: []string{"spec.placement.clusterAffinities[0].fieldSelector.matchExpressions[0].key: Unsupported value"}},
		{name: "overflow needs dynamic weight or Aggregated", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity = nil
			pp.Spec.Placement.ClusterAffinities = terms()
			pp.Spec.Placement.ReplicaScheduling = divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, "")
		}, want: []string{"spec.placement.clusterAffinities[0].overflowAffinities: Forbidden"}},
		{name: "overflow needs replica scheduling", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity = nil
			pp.Spec.Placement.ClusterAffinities = terms()
		}, want: []string{"spec.placement.clusterAffinities[0].overflowAffinities: Forbidden"}},
		{name: "overflow needs a non-empty term affinity", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity = nil
			pp.Spec.Placement.ClusterAffinities = terms()
			pp.Spec.Placement.ClusterAffinities[0].ClusterNames = nil
			pp.Spec.Placement.ReplicaScheduling = divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated, "")
		}, want: []string{"spec.placement.clusterAffinities[0].overflowAffinities: Forbidden"}},
		{name: "overflow names unique and not the term's", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity = nil
			pp.Spec.Placement.ClusterAffinities = terms()
			o := pp.Spec.Placement.ClusterAffinities[0].OverflowAffinities[0]
			o2 := o
			o2.AffinityName = "local-clusters"
			pp.Spec.Placement.ClusterAffinities[0].OverflowAffinities = append(pp.Spec.Placement.ClusterAffinities[0].OverflowAffinities, o, o2, policyv1alpha1.OverflowClusterAffinity{})
			pp.Spec.Placement.ReplicaScheduling = divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated, "")
		}, want: []string{
			"spec.placement.clusterAffinities[0].overflowAffinities[1].affinityName: Invalid value",
			"spec.placement.clusterAffinities[0].overflowAffinities[2].affinityName: Invalid value",
			"spec.placement.clusterAffinities[0].overflowAffinities[3].affinityName: Required value",
		}},

		// tolerations
		{name: "toleration operators Lt and Gt", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterTolerations = []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "x", Effect: corev1.TaintEffectNoSchedule},
				{Key: "n", Operator: corev1.TolerationOpLt, Value: "3"},
				{Key: "n", Operator: corev1.TolerationOpGt, Value: "3"},
			}
		}, want: []string{
			"spec.placement.clusterTolerations[1].operator: Unsupported value",
			"spec.placement.clusterTolerations[2].operator: Unsupported value",
		}},

		// spread constraints
		{name: "valid spread by cluster and region", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{
				{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 2, MinGroups: 1},
				{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 1},
			}
		}},
		{name: "spread by field and label", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, SpreadByLabel: "rack", MinGroups: 1}}
		}, want: []string{"spec.placement.spreadConstraints[0].spreadByLabel: Forbidden"}},
		{name: "spread group bounds", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{
				{SpreadByLabel: "a", MaxGroups: -1, MinGroups: 1},
				{SpreadByLabel: "b", MinGroups: -1},
				{SpreadByLabel: "c", MaxGroups: 1, MinGroups: 2},
			}
		}, want: []string{
			"spec.placement.spreadConstraints[0].maxGroups: Invalid value",
			"spec.placement.spreadConstraints[1].minGroups: Invalid value",
			"spec.placement.spreadConstraints[2].maxGroups: Invalid value",
		}},
		{name: "spread by the same field twice", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{
				{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1},
				{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 1},
				{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 1},
			}
		}, want: []string{"spec.placement.spreadConstraints[2].spreadByField: Invalid value"}},
		{name: "spread by field needs a cluster constraint", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldZone, MinGroups: 1}}
		}, want: []string{"spec.placement.spreadConstraints: Required value"}},
		{name: "unknown spread field and invalid label", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{
				{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1},
				{SpreadByField: "rack", MinGroups: 1},
				{SpreadByLabel: "bad label", MinGroups: 1},
			}
		}, want: []string{
			"spec.placement.spreadConstraints[1].spreadByField: Unsupported value",
			"spec.placement.spreadConstraints[2].spreadByLabel: Invalid value",
		}},

		// replica scheduling
		{name: "replica scheduling enums", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: "Split", ReplicaDivisionPreference: "Random",
				WeightPreference: &policyv1alpha1.ClusterPreferences{DynamicWeight: "Memory"},
			}
		}, want: []string{
			"spec.placement.replicaScheduling.replicaSchedulingType: Unsupported value",
			"spec.placement.replicaScheduling.replicaDivisionPreference: Unsupported value",
			"spec.placement.replicaScheduling.weightPreference.dynamicWeight: Unsupported value",
		}},
		{name: "static weights at least 1, target validated", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ReplicaScheduling = divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, "")
			pp.Spec.Placement.ReplicaScheduling.WeightPreference = &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 1},
				{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: 0},
				{TargetCluster: policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{
					MatchExpressions: []corev1.NodeSelectorRequirement{fieldReq("rack", corev1.NodeSelectorOpIn)}}}, Weight: 2},
			}}
		}, want: []string{
			"spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight: Invalid value",
			"spec.placement.replicaScheduling.weightPreference.staticWeightList[2].targetCluster.fieldSelector.matchExpressions[0].key: Unsupported value",
		}},

		// workload affinity
		{name: "valid workload affinity", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.WorkloadAffinity = &policyv1alpha1.WorkloadAffinity{
				Affinity:     &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "app.group"},
				AntiAffinity: &policyv1alpha1.WorkloadAntiAffinityTerm{GroupByLabelKey: "example.com/replica-set"},
			}
		}},
		{name: "workload affinity keys: same, invalid, missing", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.WorkloadAffinity = &policyv1alpha1.WorkloadAffinity{
				Affinity:     &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "app.group"},
				AntiAffinity: &policyv1alpha1.WorkloadAntiAffinityTerm{GroupByLabelKey: "app.group"},
			}
		}, want: []string{"spec.placement.workloadAffinity.antiAffinity.groupByLabelKey: Invalid value"}},
		{name: "workload affinity key invalid or missing", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.WorkloadAffinity = &policyv1alpha1.WorkloadAffinity{
				Affinity:     &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "INVALID KEY!"},
				AntiAffinity: &policyv1alpha1.WorkloadAntiAffinityTerm{},
			}
		}, want: []string{
			"spec.placement.workloadAffinity.affinity.groupByLabelKey: Invalid value",
			"spec.placement.workloadAffinity.antiAffinity.groupByLabelKey: Required value",
		}},

		// failover
		{name: "valid application and cluster failover", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			appFailover(func(app *policyv1alpha1.ApplicationFailoverBehavior) {
				app.StatePreservation = &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{
					{AliasLabelName: "example.com/replicas", JSONPath: "{.availableReplicas}"},
				}}
			})(pp)
			pp.Spec.Failover.Cluster = &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly}
		}},
		{name: "application failover needs propagateDeps", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			appFailover(func(*policyv1alpha1.ApplicationFailoverBehavior) {})(pp)
			pp.Spec.PropagateDeps = false
		}, want: []string{"spec.propagateDeps: Invalid value"}},
		{name: "negative toleration seconds", mod: appFailover(func(app *policyv1alpha1.ApplicationFailoverBehavior) {
			app.DecisionConditions.TolerationSeconds = ptr.To[int32](-1)
		}), want: []string{"spec.failover.application.decisionConditions.tolerationSeconds: Invalid value"}},
		{name: "grace period only with Gracefully", mod: appFailover(func(app *policyv1alpha1.ApplicationFailoverBehavior) {
			app.PurgeMode = policyv1alpha1.PurgeModeDirectly
		}), want: []string{"spec.failover.application.gracePeriodSeconds: Forbidden"}},
		{name: "grace period required with Gracefully", mod: appFailover(func(app *policyv1alpha1.ApplicationFailoverBehavior) {
			app.GracePeriodSeconds = nil
		}), want: []string{"spec.failover.application.gracePeriodSeconds: Required value"}},
		{name: "grace period positive", mod: appFailover(func(app *policyv1alpha1.ApplicationFailoverBehavior) {
			app.GracePeriodSeconds = ptr.To[int32](0)
		}), want: []string{"spec.failover.application.gracePeriodSeconds: Invalid value"}},
		{name: "unknown application purge mode", mod: appFailover(func(app *policyv1alpha1.ApplicationFailoverBehavior) {
			app.PurgeMode = "Eventually"
			app.GracePeriodSeconds = nil
		}), want: []string{"spec.failover.application.purgeMode: Unsupported value"}},
		{name: "state preservation rules", mod: appFailover(func(app *policyv1alpha1.ApplicationFailoverBehavior) {
			app.StatePreservation = &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{
				{AliasLabelName: "-invalid-label", JSONPath: "{.replicas"},
				{},
			}}
		}), want: []string{
			"spec.failover.application.statePreservation.rules[0].aliasLabelName: Invalid value",
			"spec.failover.application.statePreservation.rules[0].jsonPath: Invalid value",
			"spec.failover.application.statePreservation.rules[1].aliasLabelName: Required value",
			"spec.failover.application.statePreservation.rules[1].jsonPath: Required value",
		}},
		{name: "state preservation bounds", mod: appFailover(func(app *policyv1alpha1.ApplicationFailoverBehavior) {
			app.StatePreservation = &policyv1alpha1.StatePreservation{}
			for i := range 33 {
				app.StatePreservation.Rules = append(app.StatePreservation.Rules,
					policyv1alpha1.StatePreservationRule{AliasLabelName: fmt.Sprintf("k%d", i), JSONPath: "{.replicas}"})
			}
			app.StatePreservation.Rules[0].JSONPath = "{." + strings.Repeat("a", 1024) + "}"
		}), want: []string{
			"spec.failover.application.statePreservation.rules: Too many",
			"spec.failover.application.statePreservation.rules[0].jsonPath: Too long",
		}},
		{name: "state preservation without rules", mod: appFailover(func(app *policyv1alpha1.ApplicationFailoverBehavior) {
			app.StatePreservation = &policyv1alpha1.StatePreservation{}
		}), want: []string{"spec.failover.application.statePreservation.rules: Required value"}},
		{name: "cluster failover purge mode Never", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeNever}}
		}, want: []string{"spec.failover.cluster.purgeMode: Unsupported value"}},

		// suspension
		{name: "suspend all or some clusters, not both", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Suspension = &policyv1alpha1.Suspension{Dispatching: ptr.To(true), DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member1"}}}
		}, want: []string{"spec.suspension.dispatchingOnClusters.clusterNames: Forbidden"}},
		{name: "suspend some clusters", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Suspension = &policyv1alpha1.Suspension{Dispatching: ptr.To(false), DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member1"}}}
		}},

		// schedule priority
		{name: "valid schedule priority", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.SchedulePriority = &policyv1alpha1.SchedulePriority{PriorityClassSource: policyv1alpha1.KubePriorityClass, PriorityClassName: "high"}
		}},
		{name: "schedule priority fields required", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.SchedulePriority = &policyv1alpha1.SchedulePriority{}
		}, want: []string{"spec.schedulePriority.priorityClassName: Required value", "spec.schedulePriority.priorityClassSource: Required value"}},
		{name: "unsupported priority class source", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.SchedulePriority = &policyv1alpha1.SchedulePriority{PriorityClassSource: "PodPriorityClass", PriorityClassName: "High"}
		}, want: []string{"spec.schedulePriority.priorityClassName: Invalid value", "spec.schedulePriority.priorityClassSource: Unsupported value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkErrors(t, ValidatePropagationPolicy(validPP(tc.mod)), tc.want)
		})
	}
}

func TestValidatePropagationPolicyUpdate(t *testing.T) {
	t.Parallel()
	old := validPP(func(pp *policyv1alpha1.PropagationPolicy) { pp.ResourceVersion = "1" })
	tests := []struct {
		name string
		mod  func(*policyv1alpha1.PropagationPolicy)
		want []string
	}{
		{name: "placement change", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member2"}
		}},
		{name: "permanent id changed", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] = "other"
		}, want: []string{ppIDLabel + ": Invalid value"}},
		{name: "permanent id removed", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			delete(pp.Labels, policyv1alpha1.PropagationPolicyPermanentIDLabel)
		}, want: []string{ppIDLabel + ": Invalid value", ppIDLabel + ": Required value"}},
		{name: "scheduler name changed", mod: func(pp *policyv1alpha1.PropagationPolicy) { pp.Spec.SchedulerName = "other-scheduler" },
			want: []string{"spec.schedulerName: Invalid value"}},
		{name: "create rules apply", mod: func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Suspension = &policyv1alpha1.Suspension{Dispatching: ptr.To(true), DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member1"}}}
		}, want: []string{"spec.suspension.dispatchingOnClusters.clusterNames: Forbidden"}},
		{name: "metadata update rules apply", mod: func(pp *policyv1alpha1.PropagationPolicy) { pp.Name = "renamed" },
			want: []string{"metadata.name: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pp := old.DeepCopy()
			tc.mod(pp)
			mutation.MutatePropagationPolicy(pp, false)
			checkErrors(t, ValidatePropagationPolicyUpdate(pp, old), tc.want)
		})
	}
}

func validCPP(mods ...func(*policyv1alpha1.ClusterPropagationPolicy)) *policyv1alpha1.ClusterPropagationPolicy {
	cpp := &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook-crd"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{
				{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "guestbooks.webapp.my.domain"},
				{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "team-a"},
			},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		},
	}
	mutation.MutateClusterPropagationPolicy(cpp, true)
	for _, m := range mods {
		m(cpp)
	}
	return cpp
}

func TestValidateClusterPropagationPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*policyv1alpha1.ClusterPropagationPolicy)
		want []string
	}{
		{name: "valid, selectors in any namespace", mod: func(*policyv1alpha1.ClusterPropagationPolicy) {}},
		{name: "cluster-scoped", mod: func(cpp *policyv1alpha1.ClusterPropagationPolicy) { cpp.Namespace = "default" },
			want: []string{"metadata.namespace: Forbidden"}},
		{name: "permanent id required", mod: func(cpp *policyv1alpha1.ClusterPropagationPolicy) { cpp.Labels = nil },
			want: []string{cppIDLabel + ": Required value"}},
		{name: "invalid selector namespace", mod: func(cpp *policyv1alpha1.ClusterPropagationPolicy) { cpp.Spec.ResourceSelectors[1].Namespace = "Team_A" },
			want: []string{"spec.resourceSelectors[1].namespace: Invalid value"}},
		{name: "spec rules apply", mod: func(cpp *policyv1alpha1.ClusterPropagationPolicy) { cpp.Spec.Preemption = policyv1alpha1.PreemptAlways },
			want: []string{"spec.resourceSelectors[1].name: Required value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkErrors(t, ValidateClusterPropagationPolicy(validCPP(tc.mod)), tc.want)
		})
	}
}

func TestValidateClusterPropagationPolicyUpdate(t *testing.T) {
	t.Parallel()
	old := validCPP(func(cpp *policyv1alpha1.ClusterPropagationPolicy) { cpp.ResourceVersion = "1" })
	tests := []struct {
		name string
		mod  func(*policyv1alpha1.ClusterPropagationPolicy)
		want []string
	}{
		{name: "priority change", mod: func(cpp *policyv1alpha1.ClusterPropagationPolicy) { cpp.Spec.Priority = ptr.To[int32](5) }},
		{name: "permanent id changed", mod: func(cpp *policyv1alpha1.ClusterPropagationPolicy) {
			cpp.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] = "other"
		}, want: []string{cppIDLabel + ": Invalid value"}},
		{name: "scheduler name changed", mod: func(cpp *policyv1alpha1.ClusterPropagationPolicy) { cpp.Spec.SchedulerName = "other" },
			want: []string{"spec.schedulerName: Invalid value"}},
		{name: "create rules apply", mod: func(cpp *policyv1alpha1.ClusterPropagationPolicy) { cpp.Spec.ResourceSelectors = nil },
			want: []string{"spec.resourceSelectors: Required value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cpp := old.DeepCopy()
			tc.mod(cpp)
			checkErrors(t, ValidateClusterPropagationPolicyUpdate(cpp, old), tc.want)
		})
	}
}
