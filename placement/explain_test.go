package placement

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

// TestExplain: each cluster gets the reason the filters or the selection
// give it, with its available replicas once it passes the filters; the
// selected ones are the binding's current clusters.
func TestExplain(t *testing.T) {
	t.Parallel()
	cpu := pt.RL("cpu", "1")
	room := func(pods string) pt.ClusterOpt { return pt.WithSummary(pt.RL("pods", pods, "cpu", "100"), nil, nil) }
	clusters := []*clusterv1alpha1.Cluster{
		pt.Cluster("a", room("10")),
		pt.Cluster("b", room("10")),
		pt.Cluster("c", room("0")),
		pt.Cluster("d", pt.WithoutAPIs()),
		pt.Cluster("e", pt.WithTaint("dedicated", "gpu", corev1.TaintEffectNoSchedule)),
		pt.Cluster("f", pt.WithTaint(clusterv1alpha1.TaintClusterUnschedulable, "", corev1.TaintEffectNoSchedule)),
		pt.Cluster("g", pt.WithLabels("env", "dev")),
		pt.Cluster("h", pt.BeingDeleted()),
	}
	dynamic := &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"dev"}}}}},
		ReplicaScheduling: pt.DynamicRS()}
	spec := pt.BindingSpec(4, dynamic, pt.At("a", 2), pt.At("b", 2))
	spec.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{ResourceRequest: cpu}
	got, _, err := Explain(Input{Spec: spec, Status: &workv1alpha2.ResourceBindingStatus{}, Clusters: clusters})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a": "selected 2: Selected: 2 of 4 replicas (available 12)",
		"b": "selected 2: Selected: 2 of 4 replicas (available 12)",
		"c": flotillav1alpha1.ReasonInsufficientReplicas + ": Passed the filters, but can run no more replicas (available 0); each replica requests cpu 1.",
		"d": flotillav1alpha1.ReasonAPINotEnabled + ": cluster(s) did not have the API resource",
		"e": flotillav1alpha1.ReasonTaintNotTolerated + ": cluster(s) had untolerated taint {dedicated=gpu:NoSchedule}",
		"f": flotillav1alpha1.ReasonCordoned + ": cluster(s) had untolerated taint {cluster.karmada.io/unschedulable:NoSchedule}",
		"g": flotillav1alpha1.ReasonClusterAffinity + ": cluster(s) did not match the placement cluster affinity constraint",
		"h": flotillav1alpha1.ReasonClusterDeleting + ": The cluster is being removed.",
	}
	if len(got) != len(clusters) {
		t.Fatalf("%d clusters explained, want %d", len(got), len(clusters))
	}
	for _, cp := range got {
		line := cp.Reason + ": " + cp.Message
		if cp.Selected {
			line = fmt.Sprintf("selected %d: %s", cp.Replicas, cp.Message)
		}
		if line != want[cp.Name] {
			t.Errorf("%s: %q\nwant %q", cp.Name, line, want[cp.Name])
		}
		if (cp.AvailableReplicas != nil) != strings.Contains(cp.Message, "available") {
			t.Errorf("%s: available replicas %v with message %q", cp.Name, cp.AvailableReplicas, cp.Message)
		}
	}
}

// TestExplainFailuresAndWeights: a quota refusal is every unselected
// feasible cluster's reason; a placement that cannot be met says why; a
// static division gives each cluster its weight; a feasible cluster left
// out is NotSelected.
func TestExplainFailuresAndWeights(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithPods("10")), pt.Cluster("b", pt.WithPods("10")), pt.Cluster("c", pt.WithPods("1"))}
	quota := &workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse,
		Reason: workv1alpha2.BindingReasonQuotaExceeded, Message: "admission webhook denied: quota"}}}
	static := &policyv1alpha1.Placement{ReplicaScheduling: pt.StaticRS(pt.Weight(2, pt.OnClusters("a")), pt.Weight(1, pt.OnClusters("b", "c")))}
	aggregated := &policyv1alpha1.Placement{ReplicaScheduling: pt.AggregatedRS()}
	minGroups := &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{pt.ByCluster(5, 5)}, ReplicaScheduling: pt.DynamicRS()}
	for _, tc := range []struct {
		name   string
		spec   *workv1alpha2.ResourceBindingSpec
		status *workv1alpha2.ResourceBindingStatus
		want   map[string]string // cluster -> reason ("" selected)
		// weights are the clusters' static weights.
		weights map[string]int64
	}{
		{"a quota refused it", pt.BindingSpec(30, &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()}), quota,
			map[string]string{"a": flotillav1alpha1.ReasonQuota, "b": flotillav1alpha1.ReasonQuota, "c": flotillav1alpha1.ReasonQuota}, nil},
		{"static weights", pt.BindingSpec(4, static, pt.At("a", 2), pt.At("b", 1), pt.At("c", 1)), nil,
			map[string]string{"a": "", "b": "", "c": ""}, map[string]int64{"a": 2, "b": 1, "c": 1}},
		{"aggregated: the others are not needed", pt.BindingSpec(4, aggregated, pt.At("a", 4)), nil,
			map[string]string{"a": "", "b": flotillav1alpha1.ReasonNotSelected, "c": flotillav1alpha1.ReasonNotSelected}, nil},
		{"too few clusters for the spread constraint", pt.BindingSpec(4, minGroups), nil,
			map[string]string{"a": flotillav1alpha1.ReasonSpreadConstraint, "b": flotillav1alpha1.ReasonSpreadConstraint, "c": flotillav1alpha1.ReasonSpreadConstraint}, nil},
		{"more replicas than all can run", pt.BindingSpec(30, &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()}), nil,
			map[string]string{"a": flotillav1alpha1.ReasonInsufficientReplicas, "b": flotillav1alpha1.ReasonInsufficientReplicas, "c": flotillav1alpha1.ReasonInsufficientReplicas}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _, _ := Explain(Input{Spec: tc.spec, Status: tc.status, Clusters: clusters})
			for _, cp := range got {
				if cp.Reason != tc.want[cp.Name] || cp.Selected != (tc.want[cp.Name] == "") {
					t.Errorf("%s: selected %v reason %q (%s); want reason %q", cp.Name, cp.Selected, cp.Reason, cp.Message, tc.want[cp.Name])
				}
				if w, ok := tc.weights[cp.Name]; ok != (cp.Weight != nil) || (ok && *cp.Weight != w) {
					t.Errorf("%s: weight %v, want %v", cp.Name, cp.Weight, tc.weights[cp.Name])
				}
			}
		})
	}
}

func TestDivision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    *policyv1alpha1.Placement
		want string
	}{
		{&policyv1alpha1.Placement{}, "4 Duplicated "},
		{&policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()}, "4 Divided DynamicWeight"},
		{&policyv1alpha1.Placement{ReplicaScheduling: pt.AggregatedRS()}, "4 Divided Aggregated"},
		{&policyv1alpha1.Placement{ReplicaScheduling: pt.StaticRS(pt.Weight(1, pt.OnClusters("a")))}, "4 Divided StaticWeight"},
	} {
		d := Division(pt.BindingSpec(4, tc.p))
		if got := fmt.Sprintf("%d %s %s", d.Replicas, d.Scheduling, d.Preference); got != tc.want {
			t.Errorf("division %q, want %q", got, tc.want)
		}
	}
	if Division(pt.BindingSpec(0, &policyv1alpha1.Placement{})) != nil {
		t.Error("a template without replicas has a division")
	}
}
