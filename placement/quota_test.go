package placement

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	u := Usage(3, &workv1alpha2.ReplicaRequirements{ResourceRequest: pt.RL("cpu", "250m", "memory", "64Mi")})
	for name, want := range map[corev1.ResourceName]string{"cpu": "750m", "requests.cpu": "750m", "memory": "192Mi",
		"requests.memory": "192Mi", "pods": "3", "count/pods": "3"} {
		if got := u[name]; got.String() != want {
			t.Errorf("%s = %s, want %s", name, got.String(), want)
		}
	}
	if len(Usage(0, nil)) != 0 {
		t.Error("no replicas use something")
	}
}

func TestQuotaExceeded(t *testing.T) {
	t.Parallel()
	overall := pt.RL("cpu", "2", "pods", "10")
	for name, tc := range map[string]struct {
		others, requested corev1.ResourceList
		want              string
	}{
		"within":           {others: pt.RL("cpu", "1"), requested: pt.RL("cpu", "1", "pods", "4"), want: ""},
		"cpu over":         {others: pt.RL("cpu", "1500m"), requested: pt.RL("cpu", "1", "pods", "4"), want: "exceeded FederatedResourceQuota q: cpu: requested 1, used 1500m, limited 2"},
		"unlisted ignored": {requested: pt.RL("memory", "100Gi"), want: ""},
		"two over, sorted": {others: pt.RL("cpu", "2", "pods", "10"), requested: pt.RL("cpu", "1", "pods", "1"),
			want: "exceeded FederatedResourceQuota q: cpu: requested 1, used 2, limited 2; pods: requested 1, used 10, limited 10"},
	} {
		got, exceeded := QuotaExceeded("q", overall, tc.others, tc.requested)
		if got != tc.want || exceeded != (tc.want != "") {
			t.Errorf("%s: %q %v, want %q", name, got, exceeded, tc.want)
		}
	}
}
