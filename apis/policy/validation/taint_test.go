package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func validCTP(mods ...func(*policyv1alpha1.ClusterTaintPolicy)) *policyv1alpha1.ClusterTaintPolicy {
	ctp := &policyv1alpha1.ClusterTaintPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "not-ready", ResourceVersion: "1"},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			TargetClusters: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
			AddOnConditions: []policyv1alpha1.MatchCondition{
				{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpNotIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionTrue}},
			},
			RemoveOnConditions: []policyv1alpha1.MatchCondition{
				{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionTrue}},
			},
			Taints: []policyv1alpha1.Taint{
				{Key: "flotilla.io/not-ready", Effect: corev1.TaintEffectNoSchedule},
				{Key: "flotilla.io/not-ready", Effect: policyv1alpha1.TaintEffectPreferNoExecute, Value: "true"},
			},
		},
	}
	for _, m := range mods {
		m(ctp)
	}
	return ctp
}

func TestValidateClusterTaintPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		allowNoExecute bool
		mod            func(*policyv1alpha1.ClusterTaintPolicy)
		want           []string
	}{
		{name: "valid", mod: func(*policyv1alpha1.ClusterTaintPolicy) {}},
		{name: "cluster-scoped", mod: func(ctp *policyv1alpha1.ClusterTaintPolicy) { ctp.Name = "Not Ready" },
			want: []string{"metadata.name: Invalid value"}},
		{name: "taints required", mod: func(ctp *policyv1alpha1.ClusterTaintPolicy) { ctp.Spec.Taints = nil },
			want: []string{"spec.taints: Required value"}},
		{name: "NoExecute forbidden unless enabled", mod: func(ctp *policyv1alpha1.ClusterTaintPolicy) {
			ctp.Spec.Taints[0].Effect = corev1.TaintEffectNoExecute
		}, want: []string{"spec.taints[0].effect: Forbidden"}},
		{name: "NoExecute when enabled", allowNoExecute: true, mod: func(ctp *policyv1alpha1.ClusterTaintPolicy) {
			ctp.Spec.Taints[0].Effect = corev1.TaintEffectNoExecute
		}},
		{name: "duplicate key and effect", mod: func(ctp *policyv1alpha1.ClusterTaintPolicy) {
			ctp.Spec.Taints[1].Effect = corev1.TaintEffectNoSchedule
		}, want: []string{"spec.taints[1]: Duplicate value"}},
		{name: "taint key, value and effect", mod: func(ctp *policyv1alpha1.ClusterTaintPolicy) {
			ctp.Spec.Taints = []policyv1alpha1.Taint{
				{Effect: corev1.TaintEffectNoSchedule},
				{Key: "bad key", Value: "bad value!", Effect: corev1.TaintEffectPreferNoSchedule},
				{Key: "k"},
			}
		}, want: []string{
			"spec.taints[0].key: Required value",
			"spec.taints[1].key: Invalid value",
			"spec.taints[1].value: Invalid value",
			"spec.taints[1].effect: Unsupported value",
			"spec.taints[2].effect: Required value",
		}},
		{name: "match conditions", mod: func(ctp *policyv1alpha1.ClusterTaintPolicy) {
			ctp.Spec.AddOnConditions = []policyv1alpha1.MatchCondition{
				{Operator: policyv1alpha1.MatchConditionOpIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionFalse}},
				{ConditionType: "Ready", Operator: "Equal", StatusValues: []metav1.ConditionStatus{"Maybe"}},
			}
			ctp.Spec.RemoveOnConditions = []policyv1alpha1.MatchCondition{{ConditionType: "Ready"}}
		}, want: []string{
			"spec.addOnConditions[0].conditionType: Required value",
			"spec.addOnConditions[1].operator: Unsupported value",
			"spec.addOnConditions[1].statusValues[0]: Unsupported value",
			"spec.removeOnConditions[0].operator: Required value",
			"spec.removeOnConditions[0].statusValues: Required value",
		}},
		{name: "target clusters field selector", mod: func(ctp *policyv1alpha1.ClusterTaintPolicy) {
			ctp.Spec.TargetClusters.FieldSelector = &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{fieldReq("name", corev1.NodeSelectorOpIn)}}
		}, want: []string{"spec.targetClusters.fieldSelector.matchExpressions[0].key: Unsupported value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctp := validCTP(tc.mod)
			checkErrors(t, ValidateClusterTaintPolicy(ctp, tc.allowNoExecute), tc.want)
			if ctp.Name == validCTP().Name {
				checkErrors(t, ValidateClusterTaintPolicyUpdate(ctp, validCTP(), tc.allowNoExecute), tc.want)
			}
		})
	}
}
