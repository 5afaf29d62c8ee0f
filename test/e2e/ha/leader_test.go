package ha

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// Sizes of the leader test: 500 Deployments, in a few namespaces.
const (
	leaderNamespaces  = 5
	leaderPerNS       = 100
	leaderDeployments = leaderNamespaces * leaderPerNS
	// takeoverMargin covers two retry periods (a standby sees renewals only
	// when it polls) and a busy machine.
	takeoverMargin = 2*retryPeriod + 5*time.Second
	// endpointGrace is how long after the dead replica's endpoint is
	// withdrawn the aggregator may still send a request there.
	endpointGrace = 2 * time.Second
)

var members = []string{"member1", "member2"}

// TestLeaderKilledDuringPropagation: 500 Deployments propagate to both
// members; when a third of them exist the replica holding the controllers'
// lease is killed with SIGKILL. The other replica takes the lease within
// LeaseDuration and a margin, everything converges (1,000 member
// Deployments, every binding scheduled, every Work applied), and no member
// Deployment is created twice, deleted or changed (generation 1). A client
// keeps using the karmada.io APIs through the host throughout; no request
// fails once the dead replica's endpoint is withdrawn.
func TestLeaderKilledDuringPropagation(t *testing.T) {
	requireHA(t)
	restoreReplicas(t)
	e := framework.Env
	kc := karmada(t)
	cfg, err := e.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	hc := kubernetes.NewForConfigOrDie(cfg)
	const label = "flotilla.io/ha-e2e"
	var nss []string
	for i := range leaderNamespaces {
		nss = append(nss, framework.Namespace(t, fmt.Sprintf("ha-leader-%d", i)))
	}
	probeNS := framework.Namespace(t, "ha-leader-probe")
	first := leader(t, time.Minute)

	// Every create and delete of a labelled Deployment in the members, from now on.
	events := map[string]*memberEvents{}
	for _, m := range members {
		events[m] = watchMember(t, framework.MemberClient(t, m), label)
	}
	cpp := &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "ha-leader"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{label: "leader"}}}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members}},
		},
	}
	if _, err := kc.PolicyV1alpha1().ClusterPropagationPolicies().Create(t.Context(), cpp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		_ = kc.PolicyV1alpha1().ClusterPropagationPolicies().Delete(ctx, cpp.Name, metav1.DeleteOptions{})
	})

	// The client: list bindings, read a Cluster, write and delete a policy.
	roundTrip := policyRoundTrip(kc, probeNS)
	l := startLoad(t, 5*time.Minute, func(ctx context.Context, i int, do doFunc) {
		_ = do(func(ctx context.Context) error {
			_, err := kc.WorkV1alpha2().ResourceBindings(nss[i%len(nss)]).List(ctx, metav1.ListOptions{Limit: 50})
			return err
		})
		_ = do(func(ctx context.Context) error {
			_, err := kc.ClusterV1alpha1().Clusters().Get(ctx, members[i%len(members)], metav1.GetOptions{})
			return err
		})
		roundTrip(ctx, i, do)
	})

	create := func(from, to int) {
		var wg sync.WaitGroup
		next := make(chan int)
		var failed atomic.Pointer[error]
		for range 8 {
			wg.Go(func() {
				for i := range next {
					if _, err := hc.AppsV1().Deployments(nss[i%leaderNamespaces]).Create(t.Context(), leaderDeployment(nss[i%leaderNamespaces], i, label), metav1.CreateOptions{}); err != nil {
						failed.CompareAndSwap(nil, &err)
					}
				}
			})
		}
		for i := from; i < to; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		if err := failed.Load(); err != nil {
			t.Fatalf("creating Deployments: %v", *err)
		}
	}
	start := time.Now()
	create(0, leaderDeployments/3)
	killed := time.Now()
	if err := e.KillReplica(first); err != nil {
		t.Fatal(err)
	}
	// The endpoints controller's part: the dead replica's endpoint goes.
	if err := e.SyncFlotillaEndpoints(t.Context()); err != nil {
		t.Fatal(err)
	}
	withdrawn := time.Now()

	// The lease and the first binding of a Deployment created after the kill.
	// Both are polled beside the creates, off the test's goroutine, so
	// they report errors rather than fail the test.
	var takeover, scheduled time.Duration
	var takeoverErr, scheduledErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		takeoverErr = poll(t.Context(), leaseDuration+takeoverMargin, func(ctx context.Context) string {
			now, err := e.FlotillaLeader(ctx)
			switch {
			case err != nil:
				return err.Error()
			case now < 0 || now == first:
				return fmt.Sprintf("no running replica holds the lease (killed: %d)", first)
			}
			return ""
		})
		takeover = time.Since(killed)
	})
	afterKill := leaderDeployments / 3
	// The first decision after the kill: the first binding of a Deployment
	// created after it to be scheduled (the new leader's first placement
	// of new work), and when the first one created was.
	var firstDecision time.Duration
	wg.Go(func() {
		ns, name := nss[afterKill%leaderNamespaces], fmt.Sprintf("d%03d", afterKill)
		scheduledErr = poll(t.Context(), 2*time.Minute, func(ctx context.Context) string {
			if firstDecision == 0 {
				for _, n := range nss {
					rbs, err := kc.WorkV1alpha2().ResourceBindings(n).List(ctx, metav1.ListOptions{})
					if err != nil {
						return err.Error()
					}
					for _, rb := range rbs.Items {
						var i int
						if _, err := fmt.Sscanf(rb.Name, "d%03d-deployment", &i); err == nil && i >= afterKill &&
							meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) && firstDecision == 0 {
							firstDecision = time.Since(killed)
						}
					}
				}
			}
			rb, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, name+"-deployment", metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) {
				return fmt.Sprintf("binding %s/%s: conditions %v", ns, rb.Name, rb.Status.Conditions)
			}
			return ""
		})
		scheduled = time.Since(killed)
		if firstDecision == 0 {
			firstDecision = scheduled
		}
	})
	create(afterKill, leaderDeployments)
	wg.Wait()
	if takeoverErr != nil {
		t.Fatalf("the lease was not taken over within LeaseDuration %s + %s: %v", leaseDuration, takeoverMargin, takeoverErr)
	}
	if scheduledErr != nil {
		t.Fatalf("the first binding made after the kill was not scheduled: %v", scheduledErr)
	}

	// Convergence: every Deployment in both members, every binding
	// scheduled, one applied Work per binding and member.
	framework.Eventually(t, 4*time.Minute, func(ctx context.Context) string {
		for _, m := range members {
			if n := events[m].created(); n != leaderDeployments {
				return fmt.Sprintf("%s has %d of %d Deployments", m, n, leaderDeployments)
			}
		}
		return converged(ctx, kc, nss)
	})
	convergence := time.Since(start)
	time.Sleep(3 * time.Second) // time for a late second write to show
	l.end()

	for _, m := range members {
		if twice, deleted := events[m].anomalies(); len(twice) > 0 || len(deleted) > 0 {
			t.Errorf("%s: Deployments created more than once %v, deleted %v", m, twice, deleted)
		}
		for _, ns := range nss {
			list, err := framework.MemberClient(t, m).AppsV1().Deployments(ns).List(t.Context(), metav1.ListOptions{LabelSelector: label})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range list.Items {
				if d.Generation != 1 || string(d.UID) != events[m].uid(ns+"/"+d.Name) {
					t.Errorf("%s: %s/%s has generation %d and uid %s (created as %s): written twice; specs seen:\n  %s", m, ns, d.Name, d.Generation, d.UID, events[m].uid(ns+"/"+d.Name),
						strings.Join(events[m].history(ns+"/"+d.Name), "\n  "))
				}
			}
		}
	}
	// The new leader found the controllers' informers synced: it had kept
	// them warm while it waited, and its controllers listed nothing anew.
	now := leader(t, time.Minute)
	ss, err := framework.ReplicaMetrics(t.Context(), now)
	if err != nil {
		t.Fatal(err)
	}
	warm := ss.Sum("flotilla_controllers_warm_informers", nil)
	cold := ss.Sum("flotilla_controllers_cold_informers", nil)
	if warm < 10 || cold != 0 {
		t.Errorf("the new leader (replica %d) took over with %v warm informers and %v cold, want them all warm", now, warm, cold)
	}
	requests, failures := l.result()
	var late int
	for _, f := range failures {
		if f.at.After(withdrawn.Add(endpointGrace)) {
			late++
			t.Errorf("client request failed %.1f s after the kill, after the endpoint was withdrawn: %v", f.at.Sub(killed).Seconds(), f.err)
		} else {
			t.Logf("client request failed %.1f s after the kill, before the endpoint was withdrawn: %v", f.at.Sub(killed).Seconds(), f.err)
		}
	}
	t.Logf("leader replica %d killed with %d of %d Deployments created; lease taken over in %.1f s; first decision on work made after the kill %.1f s after it, the first Deployment created after the kill scheduled %.1f s after it (%v informers warm); %d member Deployments converged %.1f s after the first create; client: %d requests, %d failed (%d after the endpoint was withdrawn %.2f s after the kill), slowest %.1f s",
		first, leaderDeployments/3, leaderDeployments, takeover.Seconds(), firstDecision.Seconds(), scheduled.Seconds(), warm, len(members)*leaderDeployments, convergence.Seconds(),
		requests, len(failures), late, withdrawn.Sub(killed).Seconds(), l.slowestRequest().Seconds())
}

// poll checks cond every 200ms until it returns "" or timeout passes; the
// error carries cond's last complaint.
func poll(ctx context.Context, timeout time.Duration, cond func(context.Context) string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = cond(ctx)
		return last == "", nil
	})
	if err != nil {
		return fmt.Errorf("after %s: %s (%w)", timeout, last, err)
	}
	return nil
}

// converged says what is not converged yet ("" when everything is): every
// binding of nss scheduled, and an applied Work of each in every member's
// execution namespace, read a page at a time.
func converged(ctx context.Context, kc versioned.Interface, nss []string) string {
	inTest := map[string]bool{}
	for _, ns := range nss {
		inTest[ns] = true
		rbs, err := kc.WorkV1alpha2().ResourceBindings(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		scheduled := 0
		for _, rb := range rbs.Items {
			if meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) {
				scheduled++
			}
		}
		if scheduled != leaderPerNS {
			return fmt.Sprintf("%s: %d bindings scheduled of %d (%d bindings)", ns, scheduled, leaderPerNS, len(rbs.Items))
		}
	}
	for _, m := range members {
		applied := map[string]int{}
		p := pager.New(func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return kc.WorkV1alpha1().Works(names.ExecutionNamespacePrefix+m).List(ctx, o)
		})
		p.PageSize = 100
		err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
			w := obj.(*workv1alpha1.Work)
			if inTest[w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey]] && meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied) {
				applied[w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey]+"/"+w.Annotations[workv1alpha2.ResourceBindingNameAnnotationKey]]++
			}
			return nil
		})
		if err != nil {
			return err.Error()
		}
		if len(applied) != leaderDeployments {
			return fmt.Sprintf("%s: applied Works of %d of %d bindings", m, len(applied), leaderDeployments)
		}
		for b, n := range applied {
			if n != 1 {
				return fmt.Sprintf("%s: %d Works of binding %s", m, n, b)
			}
		}
	}
	return ""
}

// leaderDeployment is Deployment i of the leader test: one replica,
// paused, so that members run no Pods (the test is about propagation).
func leaderDeployment(ns string, i int, label string) *appsv1.Deployment {
	labels := map[string]string{"app": fmt.Sprintf("d%d", i)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d%03d", i), Namespace: ns, Labels: map[string]string{label: "leader"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1), Paused: true,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

// memberEvents records the creates and deletes of a member's labelled
// Deployments, as a watch from before the test's first create sees them.
type memberEvents struct {
	mu      sync.Mutex
	adds    map[string][]string // key -> uids created
	deletes map[string]int
	// specs holds each generation's spec (JSON) and the managers of its
	// managed fields, to say what changed when a Deployment is written twice.
	specs map[string][]string
}

// history returns the specs key had, one per generation seen.
func (m *memberEvents) history(key string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.specs[key])
}

func (m *memberEvents) created() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.adds)
}

func (m *memberEvents) uid(key string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u := m.adds[key]; len(u) > 0 {
		return u[0]
	}
	return ""
}

// anomalies returns the Deployments created more than once and those deleted.
func (m *memberEvents) anomalies() (twice []string, deleted []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, u := range m.adds {
		if len(u) > 1 {
			twice = append(twice, k)
		}
	}
	for k := range m.deletes {
		deleted = append(deleted, k)
	}
	return twice, deleted
}

// watchMember watches a member's Deployments carrying label, in every
// namespace, from now until the test ends; the watch resumes where it
// stopped when the member closes it.
func watchMember(t *testing.T, cs kubernetes.Interface, label string) *memberEvents {
	t.Helper()
	list, err := cs.AppsV1().Deployments("").List(t.Context(), metav1.ListOptions{LabelSelector: label, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) > 0 {
		t.Fatalf("a Deployment labelled %s exists before the test: %s/%s", label, list.Items[0].Namespace, list.Items[0].Name)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = label
			return cs.AppsV1().Deployments("").Watch(ctx, o)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &memberEvents{adds: map[string][]string{}, deletes: map[string]int{}, specs: map[string][]string{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok {
				continue
			}
			key := d.Namespace + "/" + d.Name
			m.mu.Lock()
			switch ev.Type {
			case watch.Added:
				m.adds[key] = append(m.adds[key], string(d.UID))
			case watch.Deleted:
				m.deletes[key]++
			}
			if int(d.Generation) > len(m.specs[key]) {
				spec, _ := json.Marshal(d.Spec)
				var managers []string
				for _, f := range d.ManagedFields {
					managers = append(managers, fmt.Sprintf("%s/%s@%s", f.Manager, f.Operation, f.Time))
				}
				meta, _ := json.Marshal(map[string]any{"labels": d.Labels, "annotations": d.Annotations})
				m.specs[key] = append(m.specs[key], fmt.Sprintf("generation %d by %v: metadata %s spec %s", d.Generation, managers, meta, spec))
			}
			m.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		cancel()
		<-done
	})
	return m
}
