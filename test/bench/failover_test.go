package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// benchNodes are the fake nodes of each bench member: one, with room for
// 1,200 pods (TestFailoverTaintEviction runs 500 Deployments in member2
// beside the 500 of its floor, which may still be terminating).
var benchNodes = env.NodeOptions{Count: 1, Pods: "1200"}

// readyCounter tracks, from a watch, which Deployments of a namespace in a
// member have all their replicas Ready and which were deleted, with when.
type readyCounter struct {
	mu          sync.Mutex
	ready, gone map[string]time.Time
	generations map[string]int64
}

func watchReady(t *testing.T, c kubernetes.Interface, ns string) *readyCounter {
	t.Helper()
	k := &readyCounter{ready: map[string]time.Time{}, gone: map[string]time.Time{}, generations: map[string]int64{}}
	// An informer, not a bare watch: its reflector watches again when the
	// server ends a watch (a bare watch's channel just closes, and every
	// later change would go unseen).
	factory := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns))
	inf := factory.Apps().V1().Deployments().Informer()
	if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		t.Logf("watch of Deployments in %s: %v", ns, err)
	}); err != nil {
		t.Fatal(err)
	}
	seen := func(obj any, deleted bool) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return
		}
		now := time.Now()
		k.mu.Lock()
		defer k.mu.Unlock()
		k.generations[d.Name] = d.Generation
		switch {
		case deleted:
			if _, ok := k.gone[d.Name]; !ok {
				k.gone[d.Name] = now
			}
		case d.Spec.Replicas != nil && d.Status.ReadyReplicas == *d.Spec.Replicas && d.Status.ObservedGeneration == d.Generation:
			if _, ok := k.ready[d.Name]; !ok {
				k.ready[d.Name] = now
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { seen(obj, false) },
		UpdateFunc: func(_, obj any) { seen(obj, false) },
		DeleteFunc: func(obj any) { seen(obj, true) },
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(t.Context().Done(), inf.HasSynced) {
		t.Fatalf("Deployments of %s never synced", ns)
	}
	return k
}

func (k *readyCounter) counts() (ready, gone int, last time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, m := range []map[string]time.Time{k.ready, k.gone} {
		for _, at := range m {
			if at.After(last) {
				last = at
			}
		}
	}
	return len(k.ready), len(k.gone), last
}

// TestFailoverTaintEviction (docs/performance.md, "Failover"): n
// Deployments of one replica run in member1; member1 is tainted NoExecute,
// which their policy tolerates for 10 s. Measured: from the taint to every
// replacement Ready in member2 and every old Deployment gone from member1,
// against the floor: the toleration plus the time member2 takes to run n
// Deployments created directly, in the same run. Bindings of member3 must
// see no write.
func TestFailoverTaintEviction(t *testing.T) {
	n := benchSize("FLOTILLA_BENCH_FAILOVER", 500)
	const toleration = 10
	hc, kc := framework.FastClients(t)
	m1, m2, m3 := memberClient(t, "member1"), memberClient(t, "member2"), memberClient(t, "member3")

	// The floor: n Deployments created in member2 directly, until Ready.
	const direct = "bench-failover-direct"
	if _, err := m2.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: direct}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	directReady := watchReady(t, m2, direct)
	start := time.Now()
	framework.CreateAll(t, n, 48, func(ctx context.Context, i int) error {
		_, err := m2.AppsV1().Deployments(direct).Create(ctx, benchDeployment(direct, i, 1), metav1.CreateOptions{})
		return err
	})
	waitCount(t, "direct Deployments Ready in member2", func() (int, time.Time) { r, _, last := directReady.counts(); return r, last }, n, 10*time.Minute)
	_, _, last := directReady.counts()
	directTime := last.Sub(start)
	if err := m2.CoreV1().Namespaces().Delete(t.Context(), direct, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// n Deployments on member1 (member2 tainted NoSchedule meanwhile), 50
	// on member3 that the failover must not touch.
	const ns, other = "bench-failover", "bench-failover-other"
	waitNamespace(t, hc, ns)
	waitNamespace(t, hc, other)
	taint := func(cluster, body string) {
		if _, err := kc.ClusterV1alpha1().Clusters().Patch(t.Context(), cluster, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	taint("member2", `{"spec":{"taints":[{"key":"bench-failover","effect":"NoSchedule"}]}}`)
	t.Cleanup(func() {
		for _, c := range []string{"member1", "member2"} {
			_, _ = kc.ClusterV1alpha1().Clusters().Patch(context.Background(), c, types.MergePatchType, []byte(`{"spec":{"taints":null}}`), metav1.PatchOptions{})
		}
	})
	for name, clusters := range map[string][]string{ns: {"member1", "member2"}, other: {"member3"}} {
		p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: name},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
				Placement: policyv1alpha1.Placement{
					ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters},
					ClusterTolerations: []corev1.Toleration{{Key: "bench-failover", Operator: corev1.TolerationOpExists,
						Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](toleration)}},
					ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
						ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted},
				},
			}}
		if _, err := kc.PolicyV1alpha1().PropagationPolicies(name).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	onMember1 := watchReady(t, m1, ns)
	onMember3 := watchReady(t, m3, other)
	framework.CreateAll(t, n, 48, func(ctx context.Context, i int) error {
		_, err := hc.AppsV1().Deployments(ns).Create(ctx, benchDeployment(ns, i, 1), metav1.CreateOptions{})
		return err
	})
	framework.CreateAll(t, 50, 16, func(ctx context.Context, i int) error {
		_, err := hc.AppsV1().Deployments(other).Create(ctx, benchDeployment(other, i, 1), metav1.CreateOptions{})
		return err
	})
	waitCount(t, "Deployments Ready in member1", func() (int, time.Time) { r, _, last := onMember1.counts(); return r, last }, n, 10*time.Minute)
	waitCount(t, "Deployments Ready in member3", func() (int, time.Time) { r, _, last := onMember3.counts(); return r, last }, 50, 5*time.Minute)
	taint("member2", `{"spec":{"taints":null}}`)
	time.Sleep(2 * time.Second) // the scheduler sees member2 free again
	others, err := kc.WorkV1alpha2().ResourceBindings(other).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	otherRV := map[string]string{}
	for _, b := range others.Items {
		otherRV[b.Name] = b.ResourceVersion
	}
	m := newFlotillaMetrics(t)
	before := m.scrape(t)

	onMember2 := watchReady(t, m2, ns)
	taintAt := time.Now()
	taint("member1", `{"spec":{"taints":[{"key":"bench-failover","effect":"NoExecute"}]}}`)
	waitCount(t, "replacements Ready in member2", func() (int, time.Time) { r, _, last := onMember2.counts(); return r, last }, n, 10*time.Minute)
	waitCount(t, "old Deployments gone from member1", func() (int, time.Time) { _, g, last := onMember1.counts(); return g, last }, n, 10*time.Minute)
	_, _, readyLast := onMember2.counts()
	_, _, goneLast := onMember1.counts()
	done := readyLast
	if goneLast.After(done) {
		done = goneLast
	}
	took := done.Sub(taintAt)
	after := m.scrape(t)
	floor := time.Duration(toleration)*time.Second + directTime

	others, err = kc.WorkV1alpha2().ResourceBindings(other).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, b := range others.Items {
		if otherRV[b.Name] != b.ResourceVersion {
			changed++
		}
	}
	rewritten := 0
	onMember3.mu.Lock()
	for _, g := range onMember3.generations {
		if g != 1 {
			rewritten++
		}
	}
	onMember3.mu.Unlock()
	evictions := after.Sum("workqueue_adds_total", func(l map[string]string) bool { return l["name"] == "taintManager" }) -
		before.Sum("workqueue_adds_total", func(l map[string]string) bool { return l["name"] == "taintManager" })
	record(t, "failover.txt", fmt.Sprintf(`failover: %d Deployments of 1 replica on member1, NoExecute taint tolerated for %ds
  floor: %ds + %d Deployments created in member2 directly until Ready %.1f s = %.1f s
  flotilla: from the taint to every replacement Ready in member2 (last %.1f s) and every old Deployment gone from member1 (last %.1f s): %.1f s = floor + %.1f s (goal <= floor + 10 s)
  unaffected: member3's %d bindings written %d times, its Deployments rewritten %d (goal 0); taint manager queue adds %.0f
`, n, toleration, toleration, n, directTime.Seconds(), floor.Seconds(), readyLast.Sub(taintAt).Seconds(), goneLast.Sub(taintAt).Seconds(),
		took.Seconds(), (took-floor).Seconds(), len(otherRV), changed, rewritten, evictions))
}

// waitCount waits until count reaches n, or fails after timeout.
func waitCount(t *testing.T, what string, count func() (int, time.Time), n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if c, _ := count(); c >= n {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	c, _ := count()
	t.Fatalf("%s: %d of %d after %s", what, c, n, timeout)
}
