package placement

import (
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestRefuse(t *testing.T) {
	t.Parallel()
	const (
		noAPI          = "cluster(s) did not have the API resource"
		noMatch        = "cluster(s) did not match the placement cluster affinity constraint"
		evicting       = "cluster(s) is in the process of eviction"
		noRegion       = "cluster(s) did not have region property"
		gpuUntolerated = "cluster(s) had untolerated taint {dedicated=gpu:NoSchedule}"
	)
	tolerate := func(tols ...corev1.Toleration) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ClusterTolerations: tols}
	}
	spread := func(scs ...policyv1alpha1.SpreadConstraint) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{SpreadConstraints: scs}
	}
	gpuTaint := pt.WithTaint("dedicated", "gpu", corev1.TaintEffectNoSchedule)
	tests := []struct {
		name      string
		cluster   *clusterv1alpha1.Cluster
		placement *policyv1alpha1.Placement
		resource  *workv1alpha2.ObjectReference // pt.Deployment when nil
		evictFrom string
		affinity  *policyv1alpha1.ClusterAffinity
		scheduled bool
		want      string
	}{
		{name: "fits", cluster: pt.Cluster("a"), want: ""},
		{name: "API not served", cluster: pt.Cluster("a", pt.WithoutAPIs()), want: noAPI},
		{name: "kind served in another version",
			resource: &workv1alpha2.ObjectReference{APIVersion: "apps/v1beta1", Kind: "Deployment", Name: "web"},
			cluster:  pt.Cluster("a"), want: noAPI},
		{name: "core kind", resource: &workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm"},
			cluster: pt.Cluster("a"), want: ""},
		{name: "API not served but already scheduled", cluster: pt.Cluster("a", pt.WithoutAPIs()), scheduled: true, want: ""},
		{name: "NoSchedule taint", cluster: pt.Cluster("a", gpuTaint), want: gpuUntolerated},
		{name: "NoExecute taint without value", cluster: pt.Cluster("a", pt.WithTaint("cluster.karmada.io/not-ready", "", corev1.TaintEffectNoExecute)),
			want: "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}"},
		{name: "PreferNoSchedule taint is ignored", cluster: pt.Cluster("a", pt.WithTaint("k", "v", corev1.TaintEffectPreferNoSchedule)), want: ""},
		{name: "tainted but already scheduled", cluster: pt.Cluster("a", gpuTaint), scheduled: true, want: ""},
		{name: "toleration Exists", cluster: pt.Cluster("a", gpuTaint),
			placement: tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists}), want: ""},
		{name: "toleration Exists without key tolerates everything", cluster: pt.Cluster("a", gpuTaint),
			placement: tolerate(corev1.Toleration{Operator: corev1.TolerationOpExists}), want: ""},
		{name: "toleration Equal", cluster: pt.Cluster("a", gpuTaint),
			placement: tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}), want: ""},
		{name: "toleration Equal, other value", cluster: pt.Cluster("a", gpuTaint),
			placement: tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "cpu"}), want: gpuUntolerated},
		{name: "toleration of another effect", cluster: pt.Cluster("a", gpuTaint),
			placement: tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}), want: gpuUntolerated},
		{name: "second taint untolerated", cluster: pt.Cluster("a", pt.WithTaint("x", "", corev1.TaintEffectNoSchedule), gpuTaint),
			placement: tolerate(corev1.Toleration{Key: "x", Operator: corev1.TolerationOpExists}), want: gpuUntolerated},
		{name: "affinity by name", cluster: pt.Cluster("a"), affinity: pt.OnClusters("a", "b"), want: ""},
		{name: "affinity by other name", cluster: pt.Cluster("a"), affinity: pt.OnClusters("b"), want: noMatch},
		{name: "affinity excludes", cluster: pt.Cluster("a"), affinity: &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"a"}}, want: noMatch},
		{name: "affinity label selector", cluster: pt.Cluster("a", pt.WithLabels("env", "prod")),
			affinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, want: ""},
		{name: "affinity label selector mismatch", cluster: pt.Cluster("a", pt.WithLabels("env", "dev")),
			affinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, want: noMatch},
		{name: "affinity field selector", cluster: pt.Cluster("a", pt.WithRegion("eu")),
			affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: policyv1alpha1.RegionField, Operator: corev1.NodeSelectorOpIn, Values: []string{"eu"}}}}}, want: ""},
		{name: "affinity field selector mismatch", cluster: pt.Cluster("a", pt.WithRegion("eu")),
			affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: policyv1alpha1.RegionField, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"eu"}}}}}, want: noMatch},
		{name: "affinity applies to scheduled clusters too", cluster: pt.Cluster("a"), affinity: pt.OnClusters("b"), scheduled: true, want: noMatch},
		{name: "spread by region without region", cluster: pt.Cluster("a"), placement: spread(pt.ByRegion(1, 2)), want: noRegion},
		{name: "spread by region with region", cluster: pt.Cluster("a", pt.WithRegion("eu")), placement: spread(pt.ByRegion(1, 2)), want: ""},
		{name: "spread by provider without provider", cluster: pt.Cluster("a"),
			placement: spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldProvider}),
			want:      "cluster(s) did not have provider property"},
		{name: "spread by zone with zones", cluster: pt.Cluster("a", func(c *clusterv1alpha1.Cluster) { c.Spec.Zones = []string{"z1"} }),
			placement: spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldZone}), want: ""},
		{name: "spread by cluster needs no property", cluster: pt.Cluster("a"), placement: spread(pt.ByCluster(1, 2)), want: ""},
		{name: "spread by label needs no property", cluster: pt.Cluster("a"),
			placement: spread(policyv1alpha1.SpreadConstraint{SpreadByLabel: "topology"}), want: ""},
		{name: "graceful eviction from the cluster", cluster: pt.Cluster("a"), evictFrom: "a", want: evicting},
		{name: "graceful eviction from the cluster, even when scheduled", cluster: pt.Cluster("a"), evictFrom: "a", scheduled: true, want: evicting},
		{name: "graceful eviction from another cluster", cluster: pt.Cluster("a"), evictFrom: "b", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := pt.BindingSpec(1, tc.placement)
			if tc.resource != nil {
				spec.Resource = *tc.resource
			}
			if tc.evictFrom != "" {
				spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: tc.evictFrom, Reason: "TaintUntolerated", Producer: "TaintManager"}}
			}
			if got := refuse(tc.cluster, spec, tc.affinity, tc.scheduled); got != tc.want {
				t.Errorf("refuse = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{
		pt.Cluster("a"),
		pt.Cluster("b", pt.WithoutAPIs()),
		pt.Cluster("c", pt.WithTaint("k", "", corev1.TaintEffectNoSchedule)),
		pt.Cluster("d", pt.WithoutAPIs(), pt.WithTaint("k", "", corev1.TaintEffectNoExecute)),
		pt.Cluster("e"),
	}
	// d is already scheduled: it skips the API and taint checks.
	spec := pt.BindingSpec(2, &policyv1alpha1.Placement{}, pt.At("d", 1))
	feasible, refused := filter(clusters, spec, &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"e"}}, peerClusters{})
	var got []string
	for _, c := range feasible {
		got = append(got, c.Name)
	}
	if diff := cmp.Diff([]string{"a", "d"}, got); diff != "" {
		t.Errorf("feasible (-want +got):\n%s", diff)
	}
	wantRefused := map[string]string{
		"b": "cluster(s) did not have the API resource",
		"c": "cluster(s) had untolerated taint {k:NoSchedule}",
		"e": "cluster(s) did not match the placement cluster affinity constraint",
	}
	if diff := cmp.Diff(wantRefused, refused); diff != "" {
		t.Errorf("refused (-want +got):\n%s", diff)
	}
}

func TestFitError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		total   int
		refused map[string]string
		want    string
	}{
		{
			name:    "one reason",
			total:   2,
			refused: map[string]string{"a": "cluster(s) did not have the API resource", "b": "cluster(s) did not have the API resource"},
			want:    "0/2 clusters are available: 2 cluster(s) did not have the API resource.",
		},
		{
			name:  "reasons counted and sorted",
			total: 4,
			refused: map[string]string{
				"a": "cluster(s) had untolerated taint {k:NoSchedule}",
				"b": "cluster(s) did not match the placement cluster affinity constraint",
				"c": "cluster(s) did not match the placement cluster affinity constraint",
				"d": "cluster(s) is in the process of eviction",
			},
			want: "0/4 clusters are available: 1 cluster(s) had untolerated taint {k:NoSchedule}, 1 cluster(s) is in the process of eviction, " +
				"2 cluster(s) did not match the placement cluster affinity constraint.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := fitError(tc.total, tc.refused); got != tc.want {
				t.Errorf("fitError =\n%q, want\n%q", got, tc.want)
			}
		})
	}
}

// Karmada's findClustersThatFit skips a deleting cluster without a filter
// result, so it counts in N but adds no reason to the FitError message.
func TestFitErrorSkipsDeletingClusters(t *testing.T) {
	t.Parallel()
	in := input{
		spec:     pt.BindingSpec(1, &policyv1alpha1.Placement{}),
		status:   &workv1alpha2.ResourceBindingStatus{},
		clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.BeingDeleted()), pt.Cluster("b", pt.WithTaint("k", "", corev1.TaintEffectNoSchedule))},
	}
	_, err := schedule(in)
	checkErr(t, err, workv1alpha2.BindingReasonNoClusterFit, "0/2 clusters are available: 1 cluster(s) had untolerated taint {k:NoSchedule}.")
}
