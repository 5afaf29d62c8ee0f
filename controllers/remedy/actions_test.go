package remedy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
)

func cluster(name string, conds ...metav1.Condition) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1alpha1.ClusterStatus{Conditions: conds}}
}

func cond(t string, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: t, Status: s}
}

// remedy is a Remedy; affinity nil selects every cluster.
func remedy(name string, affinity []string, matches []remedyv1alpha1.DecisionMatch, actions ...remedyv1alpha1.RemedyAction) *remedyv1alpha1.Remedy {
	r := &remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: remedyv1alpha1.RemedySpec{DecisionMatches: matches, Actions: actions}}
	if affinity != nil {
		r.Spec.ClusterAffinity = &remedyv1alpha1.ClusterAffinity{ClusterNames: affinity}
	}
	return r
}

func match(t string, op remedyv1alpha1.ClusterConditionOperator, status string) remedyv1alpha1.DecisionMatch {
	return remedyv1alpha1.DecisionMatch{ClusterConditionMatch: &remedyv1alpha1.ClusterConditionRequirement{
		ConditionType: remedyv1alpha1.ConditionType(t), Operator: op, ConditionStatus: status}}
}

func matches(m ...remedyv1alpha1.DecisionMatch) []remedyv1alpha1.DecisionMatch { return m }

const (
	equal    = remedyv1alpha1.ClusterConditionEqual
	notEqual = remedyv1alpha1.ClusterConditionNotEqual
	traffic  = remedyv1alpha1.TrafficControl
	// other is an action this API does not accept; the controller passes
	// on whatever a Remedy holds.
	other = remedyv1alpha1.RemedyAction("Another")
	dns   = string(remedyv1alpha1.ServiceDomainNameResolutionReady)
)

func TestActions(t *testing.T) {
	t.Parallel()
	ready := cond("Ready", metav1.ConditionTrue)
	dnsDown := cond(dns, metav1.ConditionFalse)
	for _, tc := range []struct {
		name     string
		cluster  *clusterv1alpha1.Cluster
		remedies []*remedyv1alpha1.Remedy
		want     []string
	}{
		{"no remedies: none", cluster("m1", ready), nil, nil},
		{"no affinity, no decision matches: always", cluster("m1"),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, nil, traffic)}, []string{"TrafficControl"}},
		{"empty decision matches: always", cluster("m1"),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(), traffic)}, []string{"TrafficControl"}},
		{"affinity names the cluster", cluster("m1"),
			[]*remedyv1alpha1.Remedy{remedy("r", []string{"m2", "m1"}, nil, traffic)}, []string{"TrafficControl"}},
		{"affinity names other clusters: none", cluster("m1"),
			[]*remedyv1alpha1.Remedy{remedy("r", []string{"m2"}, nil, traffic)}, nil},
		{"affinity naming no cluster selects none", cluster("m1"),
			[]*remedyv1alpha1.Remedy{remedy("r", []string{}, nil, traffic)}, nil},
		{"Equal holds", cluster("m1", ready, dnsDown),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(match(dns, equal, "False")), traffic)}, []string{"TrafficControl"}},
		{"Equal does not hold", cluster("m1", ready, cond(dns, metav1.ConditionTrue)),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(match(dns, equal, "False")), traffic)}, nil},
		{"NotEqual holds", cluster("m1", cond("Ready", metav1.ConditionUnknown)),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(match("Ready", notEqual, "True")), traffic)}, []string{"TrafficControl"}},
		{"NotEqual does not hold", cluster("m1", ready),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(match("Ready", notEqual, "True")), traffic)}, nil},
		{"missing condition: Equal does not hold", cluster("m1", ready),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(match(dns, equal, "False")), traffic)}, nil},
		{"missing condition: NotEqual does not hold either (Karmada)", cluster("m1", ready),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(match(dns, notEqual, "True")), traffic)}, nil},
		{"no conditions at all: no match holds", cluster("m1"),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(match("Ready", notEqual, "True")), traffic)}, nil},
		{"a match without a requirement holds never; any other one suffices", cluster("m1", ready),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(remedyv1alpha1.DecisionMatch{}, match("Ready", equal, "True")), traffic)},
			[]string{"TrafficControl"}},
		{"only matches without a requirement: none", cluster("m1", ready),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(remedyv1alpha1.DecisionMatch{}), traffic)}, nil},
		{"an unknown operator holds never", cluster("m1", ready),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(match("Ready", "In", "True")), traffic)}, nil},
		{"any one match suffices", cluster("m1", ready, dnsDown),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, matches(match("Ready", notEqual, "True"), match(dns, equal, "False")), traffic)},
			[]string{"TrafficControl"}},
		{"several remedies: union, deduplicated and sorted", cluster("m1", ready, dnsDown), []*remedyv1alpha1.Remedy{
			remedy("a", nil, matches(match(dns, equal, "False")), traffic, other),
			remedy("b", []string{"m1"}, nil, other, traffic),
			remedy("c", []string{"m2"}, nil, "Zzz"),
			remedy("d", nil, matches(match("Ready", equal, "False")), "Aaa"),
		}, []string{"Another", "TrafficControl"}},
		{"a matching remedy without actions adds none", cluster("m1", ready),
			[]*remedyv1alpha1.Remedy{remedy("r", nil, nil)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, Actions(tc.cluster, tc.remedies)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
		})
	}
}
