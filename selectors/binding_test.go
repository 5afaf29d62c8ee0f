package selectors

import (
	"testing"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestAffinityGroups(t *testing.T) {
	t.Parallel()
	wa := &policyv1alpha1.WorkloadAffinity{
		Affinity:     &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "app"},
		AntiAffinity: &policyv1alpha1.WorkloadAntiAffinityTerm{GroupByLabelKey: "replica-set"},
	}
	tests := []struct {
		name   string
		wa     *policyv1alpha1.WorkloadAffinity
		labels map[string]string
		want   *workv1alpha2.WorkloadAffinityGroups
	}{
		{name: "no workload affinity", labels: map[string]string{"app": "shop"}},
		{name: "both groups", wa: wa, labels: map[string]string{"app": "shop", "replica-set": "r1"},
			want: &workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "app=shop", AntiAffinityGroup: "replica-set=r1"}},
		{name: "only the labels present", wa: wa, labels: map[string]string{"replica-set": "r2"},
			want: &workv1alpha2.WorkloadAffinityGroups{AntiAffinityGroup: "replica-set=r2"}},
		{name: "no label, no group", wa: wa, labels: map[string]string{"other": "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := AffinityGroups(tc.wa, tc.labels)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("affinityGroups = %+v, want %+v", got, tc.want)
			}
		})
	}
}
