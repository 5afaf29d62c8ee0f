package scale

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/telemetry"
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
// Work follows a decision) on n bindings duplicated to every cluster they
// may run in: over the 20 members, then over the 100
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

	over20 := scheduleBindings(t, "bench-scale-sched20", &policyv1alpha1.ClusterAffinity{ClusterNames: names}, len(names), n)
	over100 := scheduleBindings(t, "bench-scale-sched100", nil, len(all), n)
	per := func(r schedulerRun) string {
		return fmt.Sprintf("%.0f decisions/s, a decision %.1f ms (the algorithm %.2f ms)", r.rate, r.e2e*1000, r.algorithm*1000)
	}
	return fmt.Sprintf("scheduler alone, %d bindings duplicated to every cluster: over the %d members %s; over %d Clusters (the members and %d aliases of their endpoints) %s; decisions/s ratio %.2f, algorithm time ratio %.2f",
		n, len(names), per(over20), len(all), len(all)-len(names), per(over100), over100.rate/over20.rate, over100.algorithm/over20.algorithm)
}

// scheduleBindings writes n bindings in a new namespace ns while only
// cluster-status runs, then starts the scheduler and returns its decisions
// per second, from its first decision to its n-th; then every binding must
// name all its clusters.
// schedulerRun is what one run of scheduleBindings measured.
type schedulerRun struct {
	// rate is decisions per second from the first to the last.
	rate float64
	// e2e is the mean time of a scheduling attempt (from the queue to the
	// written decision), algorithm the mean time of its algorithm's steps,
	// in seconds (the scheduler's own histograms).
	e2e, algorithm float64
}

func scheduleBindings(t *testing.T, ns string, affinity *policyv1alpha1.ClusterAffinity, clusters, n int) schedulerRun {
	t.Helper()
	hc, kc := framework.FastClients(t)
	framework.RestartFlotilla(t.Context(), t, framework.WithControllers("cluster-status"))
	if _, err := hc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Duplicated: every cluster that passes the filters is scored and
	// named in the decision, and no estimate can run out (the trimmed
	// members have no Deployment controller, so what the scheduler
	// assumed on their one kwok node stays assumed).
	placement := policyv1alpha1.Placement{ClusterAffinity: affinity}
	framework.CreateAll(t, n, 16, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("s%05d", i)
		_, err := kc.WorkV1alpha2().ResourceBindings(ns).Create(ctx, &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-deployment", Namespace: ns},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name,
					UID: types.UID(ns + strconv.Itoa(i))},
				Replicas: 1, Placement: placement.DeepCopy(), SchedulerName: "default-scheduler",
			},
		}, metav1.CreateOptions{})
		return err
	})
	framework.RestartFlotilla(t.Context(), t, framework.WithControllers("cluster-status,scheduler"))
	// A decision is one write of a binding of ns through the scheduling
	// subresource; the rate runs from the first to the n-th, so the
	// restart is not in it.
	decisions := func(ctx context.Context) float64 {
		ss, err := framework.FlotillaMetrics(ctx, t)
		if err != nil {
			return 0
		}
		return framework.Served(ss, func(l map[string]string) bool {
			return l["resource"] == "resourcebindings" && l["subresource"] == workv1alpha2.SchedulingSubresource &&
				framework.IsWrite(l["verb"]) && strings.HasPrefix(l["code"], "2")
		})
	}
	base := decisions(t.Context())
	var firstAt, last time.Time
	deadline := time.Now().Add(15 * time.Minute)
	for last.IsZero() {
		if time.Now().After(deadline) {
			t.Fatalf("the scheduler did not decide the %d bindings of %s in 15 minutes", n, ns)
		}
		d := decisions(t.Context()) - base
		now := time.Now()
		if d > 0 && firstAt.IsZero() {
			firstAt = now
		}
		if d >= float64(n) {
			last = now
		}
		time.Sleep(100 * time.Millisecond)
	}
	l, err := kc.WorkV1alpha2().ResourceBindings(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range l.Items {
		if len(b.Spec.Clusters) != clusters {
			t.Fatalf("binding %s/%s placed on %d clusters, want %d", ns, b.Name, len(b.Spec.Clusters), clusters)
		}
	}
	ss, err := framework.FlotillaMetrics(t.Context(), t)
	if err != nil {
		t.Fatal(err)
	}
	first := func(l map[string]string) bool { return l["scheduleType"] == telemetry.ScheduleTypeFirst }
	attempts := ss.Sum(telemetry.SchedulerE2ESchedulingDuration+"_count", first)
	return schedulerRun{
		rate:      float64(n) / max(last.Sub(firstAt).Seconds(), 0.1),
		e2e:       ss.Sum(telemetry.SchedulerE2ESchedulingDuration+"_sum", first) / max(attempts, 1),
		algorithm: ss.Sum(telemetry.SchedulerAlgorithmDuration+"_sum", nil) / max(attempts, 1),
	}
}
