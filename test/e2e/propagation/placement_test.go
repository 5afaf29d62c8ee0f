package propagation

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const both = "    clusterAffinity: {clusterNames: [member1, member2]}\n"

// TestDuplicated: Duplicated gives every cluster all the replicas.
func TestDuplicated(t *testing.T) {
	ns := namespace(t, "s3-duplicated")
	apply(t, policy("dup", ns, "", both+"    replicaScheduling: {replicaSchedulingType: Duplicated}\n", ""))
	apply(t, deployment("web", ns, 3, ""))
	wantReplicas(t, 90*time.Second, ns, "web", map[string]int32{"member1": 3, "member2": 3})
}

// TestClusterSelectors: label and field selectors and exclusions select
// the clusters.
func TestClusterSelectors(t *testing.T) {
	ns := namespace(t, "s3-selectors")
	labelCluster(t, "member1", `{"metadata":{"labels":{"location":"us"}}}`, `{"metadata":{"labels":{"location":null}}}`)
	labelCluster(t, "member2", `{"spec":{"provider":"acme","region":"eu-west"}}`, `{"spec":{"provider":null,"region":null}}`)
	dup := "    replicaScheduling: {replicaSchedulingType: Duplicated}\n"
	apply(t, policy("by-label", ns, "by-label", "    clusterAffinity: {labelSelector: {matchLabels: {location: us}}}\n"+dup, ""))
	apply(t, policy("by-field", ns, "by-field", "    clusterAffinity: {fieldSelector: {matchExpressions: [{key: region, operator: In, values: [eu-west]}]}}\n"+dup, ""))
	apply(t, policy("by-exclude", ns, "by-exclude", "    clusterAffinity: {exclude: [member1]}\n"+dup, ""))
	for _, d := range []string{"by-label", "by-field", "by-exclude"} {
		apply(t, deployment(d, ns, 1, ""))
	}
	wantReplicas(t, 90*time.Second, ns, "by-label", map[string]int32{"member1": 1, "member2": -1})
	wantReplicas(t, 30*time.Second, ns, "by-field", map[string]int32{"member1": -1, "member2": 1})
	wantReplicas(t, 30*time.Second, ns, "by-exclude", map[string]int32{"member1": -1, "member2": 1})
}

// TestClusterAffinities: ordered clusterAffinities: the first group that
// fits is used, and the binding says which.
func TestClusterAffinities(t *testing.T) {
	ns := namespace(t, "s3-affinities")
	placement := `    clusterAffinities:
      - {affinityName: local-clusters, labelSelector: {matchLabels: {group: local}}}
      - {affinityName: cloud-clusters, clusterNames: [member2]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`
	apply(t, policy("affinities", ns, "web", placement, ""))
	apply(t, deployment("web", ns, 2, ""))
	// No cluster is labelled local: the cloud group is used.
	wantReplicas(t, 90*time.Second, ns, "web", map[string]int32{"member1": -1, "member2": 2})
	eventually(t, 10*time.Second, func(ctx context.Context) string {
		rb, err := karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web-deployment", metav1.GetOptions{})
		if err != nil || rb.Status.SchedulerObservedAffinityName != "cloud-clusters" {
			return fmt.Sprintf("observing affinity: %v %+v", err, rb)
		}
		return ""
	})
}

// TestTaints: a NoSchedule taint keeps workloads away unless tolerated.
func TestTaints(t *testing.T) {
	ns := namespace(t, "s3-taints")
	out, err := flotillactl(t, "taint", "clusters", "member1", "dedicated=special-user:NoSchedule")
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	t.Cleanup(func() { _, _ = flotillactl(t, "taint", "clusters", "member1", "dedicated=special-user:NoSchedule-") })
	dup := "    replicaScheduling: {replicaSchedulingType: Duplicated}\n"
	apply(t, policy("intolerant", ns, "intolerant", both+dup, ""))
	apply(t, policy("tolerant", ns, "tolerant", both+dup+
		"    clusterTolerations: [{key: dedicated, value: special-user, effect: NoSchedule}]\n", ""))
	apply(t, deployment("intolerant", ns, 1, ""))
	apply(t, deployment("tolerant", ns, 1, ""))
	wantReplicas(t, 90*time.Second, ns, "tolerant", map[string]int32{"member1": 1, "member2": 1})
	wantReplicas(t, 30*time.Second, ns, "intolerant", map[string]int32{"member1": -1, "member2": 1})
}

// TestDynamicDivision: Aggregated uses as few clusters as capacity
// allows; dynamic weights divide in proportion to what each cluster can
// still run (member1 has twice member2's CPUs).
func TestDynamicDivision(t *testing.T) {
	ns := namespace(t, "s3-dynamic")
	// Division follows the capacity the members report; wait until both
	// have reported it (a cluster without a resource summary can run
	// nothing, as with Karmada's general estimator).
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		for _, m := range []string{"member1", "member2"} {
			c, err := karmada(t).ClusterV1alpha1().Clusters().Get(ctx, m, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			if s := c.Status.ResourceSummary; s == nil || s.Allocatable.Cpu().IsZero() {
				return m + " has not reported its capacity"
			}
		}
		return ""
	})
	apply(t, policy("aggregated", ns, "aggregated", both+
		"    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}\n", ""))
	apply(t, deployment("aggregated", ns, 3, "8"))
	// member1 has room for 8 such replicas: all 3 go there.
	wantReplicas(t, 90*time.Second, ns, "aggregated", map[string]int32{"member1": 3, "member2": -1})

	apply(t, policy("dynamic", ns, "dynamic", both+
		"    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, weightPreference: {dynamicWeight: AvailableReplicas}}\n", ""))
	apply(t, deployment("dynamic", ns, 6, "4"))
	// Available: member1 (64-24)/4 = 10, member2 32/4 = 8 → 6 split 3:3 or
	// 4:2 depending on the free CPUs; member1 never gets fewer.
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		got := replicasIn(ctx, t, ns, "dynamic", "member1", "member2")
		if got["member1"] < 1 || got["member2"] < 1 || got["member1"]+got["member2"] != 6 || got["member1"] < got["member2"] {
			return fmt.Sprintf("dynamic division: %v; %s", got, bindingState(ctx, t, ns, "dynamic"))
		}
		return ""
	})
}

// TestSpreadConstraints: spread constraints bound the number of clusters.
func TestSpreadConstraints(t *testing.T) {
	ns := namespace(t, "s3-spread")
	apply(t, policy("one-cluster", ns, "web", both+
		"    spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}]\n"+
		"    replicaScheduling: {replicaSchedulingType: Duplicated}\n", ""))
	apply(t, deployment("web", ns, 2, ""))
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		got := replicasIn(ctx, t, ns, "web", "member1", "member2")
		if (got["member1"] == 2) == (got["member2"] == 2) {
			return fmt.Sprintf("want exactly one cluster: %v", got)
		}
		return ""
	})
}

// TestPolicyPriority: of two matching policies, explicit priority wins;
// at equal priority a name match beats a label match beats a kind-only
// match; a PropagationPolicy beats a ClusterPropagationPolicy.
func TestPolicyPriority(t *testing.T) {
	ns := namespace(t, "s3-priority")
	to := func(c string) string {
		return fmt.Sprintf("    clusterAffinity: {clusterNames: [%s]}\n    replicaScheduling: {replicaSchedulingType: Duplicated}\n", c)
	}
	apply(t, policy("kind-only", ns, "", to("member1"), ""))
	apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: by-label, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: labelled}}}]
  placement:
%s`, ns, to("member2")))
	apply(t, policy("by-name", ns, "named", to("member2"), ""))
	apply(t, policy("high", ns, "", to("member2"), "  priority: 10\n"))
	apply(t, deployment("labelled", ns, 1, ""))
	apply(t, deployment("named", ns, 1, ""))
	// "high" (priority 10) wins everything in the namespace.
	wantReplicas(t, 90*time.Second, ns, "labelled", map[string]int32{"member1": -1, "member2": 1})
	wantReplicas(t, 30*time.Second, ns, "named", map[string]int32{"member1": -1, "member2": 1})

	ns2 := namespace(t, "s3-priority-implicit")
	apply(t, policy("kind-only", ns2, "", to("member1"), ""))
	apply(t, policy("by-name", ns2, "named", to("member2"), ""))
	apply(t, deployment("named", ns2, 1, ""))
	apply(t, deployment("other", ns2, 1, ""))
	wantReplicas(t, 90*time.Second, ns2, "named", map[string]int32{"member1": -1, "member2": 1})
	wantReplicas(t, 30*time.Second, ns2, "other", map[string]int32{"member1": 1, "member2": -1})

	// A ClusterPropagationPolicy only gets what no PropagationPolicy matches.
	ns3 := namespace(t, "s3-priority-cpp")
	apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: s3-cpp}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: %s}]
  priority: 100
  placement:
%s`, ns3, to("member2")))
	t.Cleanup(func() { _, _ = kubectl(t, "delete", "cpp", "s3-cpp") })
	apply(t, policy("pp", ns3, "by-pp", to("member1"), ""))
	apply(t, deployment("by-pp", ns3, 1, ""))
	apply(t, deployment("by-cpp", ns3, 1, ""))
	wantReplicas(t, 90*time.Second, ns3, "by-pp", map[string]int32{"member1": 1, "member2": -1})
	wantReplicas(t, 30*time.Second, ns3, "by-cpp", map[string]int32{"member1": -1, "member2": 1})
}

// labelCluster merge-patches a Cluster for the test and undoes it after.
func labelCluster(t *testing.T, name, patch, undo string) {
	t.Helper()
	c := karmada(t).ClusterV1alpha1().Clusters()
	if _, err := c.Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.Patch(context.Background(), name, types.MergePatchType, []byte(undo), metav1.PatchOptions{})
	})
}
