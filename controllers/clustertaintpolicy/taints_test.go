package clustertaintpolicy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

var (
	t0  = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now = metav1.NewTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
)

func cluster(name string, labels map[string]string, taints []corev1.Taint, conds ...metav1.Condition) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: clusterv1alpha1.ClusterSpec{Taints: taints}, Status: clusterv1alpha1.ClusterStatus{Conditions: conds}}
}

func cond(t string, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: t, Status: s}
}

func match(t string, op policyv1alpha1.MatchConditionOperator, values ...metav1.ConditionStatus) policyv1alpha1.MatchCondition {
	return policyv1alpha1.MatchCondition{ConditionType: t, Operator: op, StatusValues: values}
}

func policy(name string, created metav1.Time, target *policyv1alpha1.ClusterAffinity, add, remove []policyv1alpha1.MatchCondition, taints ...policyv1alpha1.Taint) *policyv1alpha1.ClusterTaintPolicy {
	return &policyv1alpha1.ClusterTaintPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: created},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{TargetClusters: target, AddOnConditions: add, RemoveOnConditions: remove, Taints: taints}}
}

var (
	noSched = policyv1alpha1.Taint{Key: "flotilla.io/down", Effect: corev1.TaintEffectNoSchedule}
	noExec  = policyv1alpha1.Taint{Key: "flotilla.io/down", Value: "x", Effect: corev1.TaintEffectNoExecute}
	inFalse = []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpIn, metav1.ConditionFalse, metav1.ConditionUnknown)}
	inTrue  = []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpIn, metav1.ConditionTrue)}
)

func taint(t policyv1alpha1.Taint, at metav1.Time) corev1.Taint {
	return corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect, TimeAdded: &at}
}

func TestTaints(t *testing.T) {
	notReady := cond("Ready", metav1.ConditionFalse)
	ready := cond("Ready", metav1.ConditionTrue)
	other := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &t0}
	for _, tc := range []struct {
		name     string
		cluster  *clusterv1alpha1.Cluster
		policies []*policyv1alpha1.ClusterTaintPolicy
		want     []corev1.Taint
	}{
		{"conditions match: taints added with now", cluster("m1", nil, nil, notReady),
			[]*policyv1alpha1.ClusterTaintPolicy{policy("p", t0, nil, inFalse, inTrue, noSched, noExec)},
			[]corev1.Taint{taint(noSched, now), taint(noExec, now)}},
		{"already there: kept as it was", cluster("m1", nil, []corev1.Taint{other, taint(noSched, t0)}, notReady),
			[]*policyv1alpha1.ClusterTaintPolicy{policy("p", t0, nil, inFalse, inTrue, noSched)},
			[]corev1.Taint{other, taint(noSched, t0)}},
		{"remove conditions match: only the policy's taints go", cluster("m1", nil, []corev1.Taint{other, taint(noSched, t0)}, ready),
			[]*policyv1alpha1.ClusterTaintPolicy{policy("p", t0, nil, inFalse, inTrue, noSched)},
			[]corev1.Taint{other}},
		{"neither matches: unchanged", cluster("m1", nil, []corev1.Taint{taint(noSched, t0)}, cond("Ready", metav1.ConditionUnknown)),
			[]*policyv1alpha1.ClusterTaintPolicy{policy("p", t0, nil, []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpIn, metav1.ConditionFalse)}, inTrue, noSched)},
			[]corev1.Taint{taint(noSched, t0)}},
		{"empty add conditions never match", cluster("m1", nil, nil, notReady),
			[]*policyv1alpha1.ClusterTaintPolicy{policy("p", t0, nil, nil, inTrue, noSched)}, []corev1.Taint{}},
		{"NotIn, and a condition the cluster lacks matches neither", cluster("m1", nil, nil, ready),
			[]*policyv1alpha1.ClusterTaintPolicy{
				policy("a", t0, nil, []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpNotIn, metav1.ConditionFalse)}, nil, noSched),
				policy("b", t0, nil, []policyv1alpha1.MatchCondition{match("NetworkOK", policyv1alpha1.MatchConditionOpNotIn, metav1.ConditionTrue)}, nil, noExec)},
			[]corev1.Taint{taint(noSched, now)}},
		{"all add conditions must match", cluster("m1", nil, nil, notReady, cond("Disk", metav1.ConditionTrue)),
			[]*policyv1alpha1.ClusterTaintPolicy{policy("p", t0, nil, append(inFalse, match("Disk", policyv1alpha1.MatchConditionOpIn, metav1.ConditionFalse)), nil, noSched)},
			[]corev1.Taint{}},
		{"target clusters", cluster("m1", map[string]string{"env": "prod"}, nil, notReady),
			[]*policyv1alpha1.ClusterTaintPolicy{
				policy("names", t0, &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}}, inFalse, nil, noSched),
				policy("labels", t0, &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, inFalse, nil, noExec)},
			[]corev1.Taint{taint(noExec, now)}},
		{"older policy first: a newer one removes what it adds", cluster("m1", nil, nil, notReady),
			[]*policyv1alpha1.ClusterTaintPolicy{
				policy("newer-removes", now, nil, nil, inFalse, noSched),
				policy("older-adds", t0, nil, inFalse, nil, noSched)},
			[]corev1.Taint{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.cluster.DeepCopy()
			got := Taints(tc.cluster, tc.policies, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.cluster); diff != "" {
				t.Errorf("Taints changed its cluster:\n%s", diff)
			}
		})
	}
}
