package inventory

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/placement/placementtest"
)

func TestProfile(t *testing.T) {
	t.Parallel()
	created := metav1.NewTime(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	readySince := metav1.NewTime(time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC))
	access := Access{Server: "https://cp.example:6443/", CAData: []byte("CA")}
	full := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1", CreationTimestamp: created, Labels: map[string]string{"env": "prod", PropertyRegion: "ignored"}},
		Spec:       clusterv1alpha1.ClusterSpec{ID: "uid-1", Region: "eu-west", Zones: []string{"a", "b"}, Zone: "c", Provider: "kwok"},
		Status: clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.36.1",
			Conditions:      []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse, Reason: "ClusterNotReachable", Message: "cluster is not reachable", LastTransitionTime: readySince}},
			NodeSummary:     &clusterv1alpha1.NodeSummary{TotalNum: 3, ReadyNum: 2},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: placementtest.RL("cpu", "12", "memory", "48Gi", "pods", "330")}},
	}
	tests := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		want    string // the status as JSON
	}{
		{name: "everything reported", cluster: full, want: `{
 "accessProviders": [{"cluster": {"certificate-authority-data": "Q0E=", "server": "https://cp.example:6443/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy"}, "name": "flotilla"}],
 "conditions": [
  {"lastTransitionTime": "2026-11-02T10:00:00Z", "message": "cluster is not reachable", "reason": "ClusterNotReachable", "status": "False", "type": "ControlPlaneHealthy"},
  {"lastTransitionTime": "2026-11-01T10:00:00Z", "message": "The cluster is managed by Flotilla.", "reason": "ClusterJoined", "status": "True", "type": "Joined"}],
 "properties": [
  {"name": "cluster.clusterset.k8s.io", "value": "uid-1"},
  {"name": "env", "value": "prod"},
  {"name": "flotilla.io/allocatable-cpu", "value": "12"},
  {"name": "flotilla.io/allocatable-memory", "value": "48Gi"},
  {"name": "flotilla.io/node-count", "value": "3"},
  {"name": "flotilla.io/provider", "value": "kwok"},
  {"name": "flotilla.io/ready-node-count", "value": "2"},
  {"name": "topology.kubernetes.io/region", "value": "eu-west"},
  {"name": "topology.kubernetes.io/zone", "value": "a,b,c"}],
 "version": {"kubernetes": "v1.36.1"}}`},
		{name: "just joined", cluster: &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2", CreationTimestamp: created}},
			want: `{
 "accessProviders": [{"cluster": {"certificate-authority-data": "Q0E=", "server": "https://cp.example:6443/apis/cluster.karmada.io/v1alpha1/clusters/member2/proxy"}, "name": "flotilla"}],
 "conditions": [
  {"lastTransitionTime": "2026-11-01T10:00:00Z", "message": "Flotilla has not reported the cluster's health yet.", "reason": "ClusterStatusUnknown", "status": "Unknown", "type": "ControlPlaneHealthy"},
  {"lastTransitionTime": "2026-11-01T10:00:00Z", "message": "The cluster is managed by Flotilla.", "reason": "ClusterJoined", "status": "True", "type": "Joined"}],
 "properties": []}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Profile(tc.cluster, "inventory", access)
			if p.GetNamespace() != "inventory" || p.GetName() != tc.cluster.Name || p.GetLabels()["x-k8s.io/cluster-manager"] != Manager ||
				p.GetKind() != "ClusterProfile" || p.GetAPIVersion() != "multicluster.x-k8s.io/v1alpha1" {
				t.Errorf("metadata: %s %s %s/%s %v", p.GetAPIVersion(), p.GetKind(), p.GetNamespace(), p.GetName(), p.GetLabels())
			}
			var got, want any
			b, _ := json.Marshal(p.Object["status"])
			_ = json.Unmarshal(b, &got)
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("status (-want +got):\n%s", d)
			}
			// Written again from the same cluster, the profile is the same.
			if d := cmp.Diff(p, Profile(tc.cluster, "inventory", access)); d != "" {
				t.Errorf("not stable:\n%s", d)
			}
		})
	}
}

// Values longer than the schema allows are cut; names too long are left out.
func TestPropertiesBounded(t *testing.T) {
	t.Parallel()
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{strings.Repeat("k", 300): "v"}},
		Spec: clusterv1alpha1.ClusterSpec{Region: strings.Repeat("r", 2000)}}
	props := properties(c)
	if len(props) != 1 || len(props[0].(map[string]any)["value"].(string)) != maxPropertyValue {
		t.Errorf("properties %v, want the region alone, cut to %d", props, maxPropertyValue)
	}
}
