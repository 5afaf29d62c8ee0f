package scale

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// aliasesPerMember Cluster objects are added for each member, so the bed
// shows 100 Clusters: each alias is a Cluster of its own (its own status
// probes, its own hub connection, its own estimate) whose apiEndpoint and
// credentials are its member's. No more than 20 kube-apiservers fit on the
// machine; what the scheduler computes per cluster is the same.
const aliasesPerMember = 4

// schedulerOverClusters measures the scheduler alone (flotilla-apiserver
// restarted with only the cluster-status and scheduler controllers, so no
// Work follows a decision) on n bindings dividing 20 replicas by the
// clusters' available replicas: over the 20 members, then over the 100
// Clusters (the members and their aliases), each a fresh set of bindings
// written while no scheduler runs.
func schedulerOverClusters(t *testing.T, names []string, n int) string {
	t.Helper()
	_, kc := framework.FastClients(t)
	all := append([]string(nil), names...)
	for _, m := range names {
		c, err := kc.ClusterV1alpha1().Clusters().Get(t.Context(), m, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= aliasesPerMember; k++ {
			alias := &clusterv1alpha1.Cluster{
				ObjectMeta: metav1.ObjectMeta{Name: m + "-alias" + strconv.Itoa(k), Labels: map[string]string{"bench-scale/alias-of": m}},
				Spec:       *c.Spec.DeepCopy(),
			}
			alias.Spec.ID = ""
			if _, err := kc.ClusterV1alpha1().Clusters().Create(t.Context(), alias, metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating %s: %v", alias.Name, err)
			}
			all = append(all, alias.Name)
		}
	}
	if err := framework.Env.WaitClustersReady(t.Context(), all, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	orig := append([]string(nil), framework.Env.Host.Process(env.FlotillaComponent).Args...)
	defer framework.RestartFlotilla(context.Background(), t, orig)

	over20 := scheduleBindings(t, "bench-scale-sched20", &policyv1alpha1.ClusterAffinity{ClusterNames: names}, n)
	over100 := scheduleBindings(t, "bench-scale-sched100", nil, n)
	return fmt.Sprintf("scheduler alone, %d bindings dividing 20 replicas by available replicas: %.0f decisions/s over the %d members; %.0f decisions/s over %d Clusters (the members and %d aliases of their endpoints): ratio %.2f",
		n, over20, len(names), over100, len(all), len(all)-len(names), over100/over20)
}

// scheduleBindings writes n bindings in a new namespace ns while only
// cluster-status runs, then starts the scheduler and returns its decisions
// per second until every binding is placed.
func scheduleBindings(t *testing.T, ns string, affinity *policyv1alpha1.ClusterAffinity, n int) float64 {
	t.Helper()
	hc, kc := framework.FastClients(t)
	framework.RestartFlotilla(t.Context(), t, framework.WithControllers("cluster-status"))
	if _, err := hc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	placement := policyv1alpha1.Placement{
		ClusterAffinity: affinity,
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
		},
	}
	requirements := &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}}
	framework.CreateAll(t, n, 16, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("s%05d", i)
		_, err := kc.WorkV1alpha2().ResourceBindings(ns).Create(ctx, &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-deployment", Namespace: ns},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name,
					UID: types.UID(ns + strconv.Itoa(i))},
				Replicas: 20, ReplicaRequirements: requirements.DeepCopy(), Placement: placement.DeepCopy(), SchedulerName: "default-scheduler",
			},
		}, metav1.CreateOptions{})
		return err
	})
	start := time.Now()
	framework.RestartFlotilla(t.Context(), t, framework.WithControllers("cluster-status,scheduler"))
	framework.Eventually(t, 15*time.Minute, func(ctx context.Context) string {
		l, err := kc.WorkV1alpha2().ResourceBindings(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		placed := 0
		for _, b := range l.Items {
			if len(b.Spec.Clusters) > 0 {
				placed++
			}
		}
		if placed < n {
			return fmt.Sprintf("%d of %d bindings in %s placed", placed, n, ns)
		}
		return ""
	})
	return float64(n) / time.Since(start).Seconds()
}
