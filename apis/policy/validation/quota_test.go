package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func resources(kv ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		list[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return list
}

func validFRQ(mods ...func(*policyv1alpha1.FederatedResourceQuota)) *policyv1alpha1.FederatedResourceQuota {
	q := &policyv1alpha1.FederatedResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "team-quota", Namespace: "team-a", ResourceVersion: "1"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{
			Overall: resources("cpu", "10", "memory", "20Gi", "pods", "100", "nvidia.com/gpu", "4", "count/deployments.apps", "10"),
			StaticAssignments: []policyv1alpha1.StaticClusterAssignment{
				{ClusterName: "member1", Hard: resources("cpu", "4", "memory", "8Gi")},
				{ClusterName: "member2", Hard: resources("cpu", "6", "memory", "12Gi")},
			},
		},
	}
	for _, m := range mods {
		m(q)
	}
	return q
}

func TestValidateFederatedResourceQuota(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		mod        func(*policyv1alpha1.FederatedResourceQuota)
		want       []string
		wantUpdate []string // when it differs from want
	}{
		{name: "valid, assignments use all of overall", mod: func(*policyv1alpha1.FederatedResourceQuota) {}},
		{name: "namespace required", mod: func(q *policyv1alpha1.FederatedResourceQuota) { q.Namespace = "" },
			want: []string{"metadata.namespace: Required value"}, wantUpdate: []string{"metadata.namespace: Invalid value"}},
		{name: "overall required", mod: func(q *policyv1alpha1.FederatedResourceQuota) {
			q.Spec.Overall = nil
			q.Spec.StaticAssignments = nil
		}, want: []string{"spec.overall: Required value"}},
		{name: "assigned resource missing from overall", mod: func(q *policyv1alpha1.FederatedResourceQuota) {
			q.Spec.StaticAssignments[0].Hard["requests.storage"] = resource.MustParse("1Gi")
		}, want: []string{"spec.staticAssignments[0].hard[requests.storage]: Invalid value"}},
		{name: "assignments exceed overall", mod: func(q *policyv1alpha1.FederatedResourceQuota) {
			q.Spec.StaticAssignments[1].Hard["cpu"] = resource.MustParse("6001m")
		}, want: []string{"spec.overall[cpu]: Invalid value"}},
		{name: "cluster names", mod: func(q *policyv1alpha1.FederatedResourceQuota) {
			q.Spec.StaticAssignments = []policyv1alpha1.StaticClusterAssignment{
				{ClusterName: "member1", Hard: resources("cpu", "1")},
				{ClusterName: "member1", Hard: resources("cpu", "1")},
				{Hard: resources("cpu", "1")},
				{ClusterName: strings.Repeat("m", 49), Hard: resources("cpu", "1")},
				{ClusterName: "Member_1", Hard: resources("cpu", "1")},
			}
		}, want: []string{
			"spec.staticAssignments[1].clusterName: Duplicate value",
			"spec.staticAssignments[2].clusterName: Required value",
			"spec.staticAssignments[3].clusterName: Too long",
			"spec.staticAssignments[4].clusterName: Invalid value",
		}},
		{name: "resource names and quantities", mod: func(q *policyv1alpha1.FederatedResourceQuota) {
			q.Spec.StaticAssignments = nil
			q.Spec.Overall = resources("cpu", "-1", "foo", "1", "pods", "1.5", "bad name/x", "1", "hugepages-2Mi", "1Gi")
		}, want: []string{
			"spec.overall[cpu]: Invalid value",
			"spec.overall[foo]: Invalid value",
			"spec.overall[pods]: Invalid value",
			"spec.overall[bad name/x]: Invalid value",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := validFRQ(tc.mod)
			checkErrors(t, ValidateFederatedResourceQuota(q), tc.want)
			wantUpdate := tc.want
			if tc.wantUpdate != nil {
				wantUpdate = tc.wantUpdate
			}
			checkErrors(t, ValidateFederatedResourceQuotaUpdate(q, validFRQ()), wantUpdate)
		})
	}
}

func TestValidateFederatedResourceQuotaStatusUpdate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status policyv1alpha1.FederatedResourceQuotaStatus
		want   []string
	}{
		{name: "valid status", status: policyv1alpha1.FederatedResourceQuotaStatus{
			Overall:     resources("cpu", "10"),
			OverallUsed: resources("cpu", "3"),
			AggregatedStatus: []policyv1alpha1.ClusterQuotaStatus{
				{ClusterName: "member1", ResourceQuotaStatus: corev1.ResourceQuotaStatus{Hard: resources("cpu", "4"), Used: resources("cpu", "3")}},
			},
		}},
		{name: "invalid status", status: policyv1alpha1.FederatedResourceQuotaStatus{
			OverallUsed: resources("cpu", "-3"),
			AggregatedStatus: []policyv1alpha1.ClusterQuotaStatus{
				{ResourceQuotaStatus: corev1.ResourceQuotaStatus{Used: resources("widgets", "1")}},
			},
		}, want: []string{
			"status.overallUsed[cpu]: Invalid value",
			"status.aggregatedStatus[0].clusterName: Required value",
			"status.aggregatedStatus[0].used[widgets]: Invalid value",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := validFRQ(func(q *policyv1alpha1.FederatedResourceQuota) { q.Status = tc.status })
			checkErrors(t, ValidateFederatedResourceQuotaStatusUpdate(q, validFRQ()), tc.want)
		})
	}
}
