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

func TestBindingUsage(t *testing.T) {
	t.Parallel()
	req := &workv1alpha2.ReplicaRequirements{ResourceRequest: pt.RL("cpu", "10m")}
	comps := []workv1alpha2.Component{
		{Name: "jm", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: pt.RL("cpu", "1")}},
		{Name: "tm", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: pt.RL("cpu", "500m", "memory", "1Gi")}},
	}
	for name, tc := range map[string]struct {
		spec     workv1alpha2.ResourceBindingSpec
		clusters []workv1alpha2.TargetCluster
		want     map[corev1.ResourceName]string
	}{
		"unscheduled": {spec: workv1alpha2.ResourceBindingSpec{Replicas: 3, ReplicaRequirements: req}, want: map[corev1.ResourceName]string{}},
		"divided": {spec: workv1alpha2.ResourceBindingSpec{Replicas: 3, ReplicaRequirements: req},
			clusters: []workv1alpha2.TargetCluster{{Name: "a", Replicas: 1}, {Name: "b", Replicas: 2}},
			want:     map[corev1.ResourceName]string{"cpu": "30m", "requests.cpu": "30m", "pods": "3"}},
		"duplicated counts every copy": {spec: workv1alpha2.ResourceBindingSpec{Replicas: 2, ReplicaRequirements: req},
			clusters: []workv1alpha2.TargetCluster{{Name: "a", Replicas: 2}, {Name: "b", Replicas: 2}},
			want:     map[corev1.ResourceName]string{"cpu": "40m", "pods": "4"}},
		"no requirements: pods only": {spec: workv1alpha2.ResourceBindingSpec{Replicas: 2},
			clusters: []workv1alpha2.TargetCluster{{Name: "a", Replicas: 2}},
			want:     map[corev1.ResourceName]string{"pods": "2", "cpu": ""}},
		"components: a set per cluster": {spec: workv1alpha2.ResourceBindingSpec{Components: comps},
			clusters: []workv1alpha2.TargetCluster{
				{Name: "a", Components: []workv1alpha2.TargetComponent{{Name: "jm", Replicas: 1}, {Name: "tm", Replicas: 2}}},
				{Name: "b"}, // the whole set
			},
			want: map[corev1.ResourceName]string{"cpu": "4", "memory": "4Gi", "pods": "6"}},
	} {
		got := BindingUsage(&tc.spec, tc.clusters)
		for res, want := range tc.want {
			q, ok := got[res]
			if want == "" {
				if ok {
					t.Errorf("%s: %s = %s, want none", name, res, q.String())
				}
				continue
			}
			if q.String() != want {
				t.Errorf("%s: %s = %s, want %s", name, res, q.String(), want)
			}
		}
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	got := Within(pt.RL("cpu", "10m", "requests.cpu", "10m", "pods", "1"), pt.RL("cpu", "10m", "memory", "100Mi"))
	if len(got) != 1 || got.Cpu().String() != "10m" {
		t.Errorf("Within = %v, want cpu 10m only", got)
	}
}

func TestOverallExceeded(t *testing.T) {
	t.Parallel()
	overall := pt.RL("cpu", "100m", "pods", "3")
	for name, tc := range map[string]struct {
		others, old, requested corev1.ResourceList
		want                   string
	}{
		"new binding within":   {others: pt.RL("cpu", "50m"), requested: pt.RL("cpu", "50m", "pods", "1")},
		"new binding over":     {others: pt.RL("cpu", "60m"), requested: pt.RL("cpu", "50m", "pods", "1"), want: "FederatedResourceQuota(ns/q) exceeded for resource cpu: requested sum 110m, limit 100m."},
		"scale-up over pods":   {others: pt.RL("pods", "2"), old: pt.RL("cpu", "10m", "pods", "1"), requested: pt.RL("cpu", "20m", "pods", "2"), want: "FederatedResourceQuota(ns/q) exceeded for resource pods: requested sum 4, limit 3."},
		"first by name":        {others: pt.RL("cpu", "1", "pods", "3"), requested: pt.RL("cpu", "1m", "pods", "1"), want: "FederatedResourceQuota(ns/q) exceeded for resource cpu: requested sum 1001m, limit 100m."},
		"unchanged over":       {others: pt.RL("cpu", "1"), old: pt.RL("cpu", "50m"), requested: pt.RL("cpu", "50m")},
		"scale-down over":      {others: pt.RL("cpu", "1"), old: pt.RL("cpu", "50m"), requested: pt.RL("cpu", "20m")},
		"unlisted resource":    {requested: pt.RL("memory", "100Gi")},
		"exactly at the limit": {others: pt.RL("cpu", "50m"), requested: pt.RL("cpu", "50m")},
	} {
		got, exceeded := OverallExceeded("ns", "q", overall, tc.others, tc.old, tc.requested)
		want := tc.want
		if want != "" {
			want = `admission webhook "resourcebinding.karmada.io" denied the request: ` + want
		}
		if got != want || exceeded != (tc.want != "") {
			t.Errorf("%s: %q %v, want %q", name, got, exceeded, want)
		}
	}
}
