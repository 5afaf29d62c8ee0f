package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	flotillainformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// The stages a new endpoint passes on its way from member1 to member3, in
// order; each is the first time the bench saw the pod (by UID) there.
const (
	stageReady     = iota // member1's pod Ready (a watch of member1's pods)
	stageOwn              // listed Ready in member1's own EndpointSlice of the Service (the floor)
	stageCollected        // in a Work collected into karmada-es-member1
	stageDispatch         // in a Work made for member3 in karmada-es-member3
	stageImported         // listed Ready in member3's EndpointSlice of derived-<svc>
	stages
)

var stageNames = [stages]string{"pod Ready in member1", "member1's own EndpointSlice", "collected Work (karmada-es-member1)",
	"dispatched Work (karmada-es-member3)", "member3's imported EndpointSlice"}

// endpointTracker records, per pod UID, when each stage first showed it,
// and counts the writes the bench sees: EndpointSlices of member1's
// Service (resourceVersion changes) and the service's Works (creates and
// spec changes, i.e. generation changes, per execution namespace; other
// updates, such as the execution controller's status, apart).
type endpointTracker struct {
	mu   sync.Mutex
	seen map[types.UID]*[stages]time.Time

	ownSliceWrites     int
	workSpecWrites     map[string]int // by namespace: creates and generation changes
	workOtherWrites    map[string]int // by namespace: updates that left the generation alone
	workDeletes        map[string]int
	importedSliceWrite int

	// The control plane's copies of member1's slices (imported-member1-…
	// of derived-<svc> on the host), apart from the stages: they are not
	// on the way to member3.
	hostSeen        map[types.UID]time.Time
	hostSliceWrites int
}

func newEndpointTracker() *endpointTracker {
	return &endpointTracker{seen: map[types.UID]*[stages]time.Time{}, workSpecWrites: map[string]int{},
		workOtherWrites: map[string]int{}, workDeletes: map[string]int{}, hostSeen: map[types.UID]time.Time{}}
}

// saw records that stage showed uid at now, unless it did earlier.
func (k *endpointTracker) saw(uid types.UID, stage int, now time.Time) {
	if uid == "" {
		return
	}
	s := k.seen[uid]
	if s == nil {
		s = &[stages]time.Time{}
		k.seen[uid] = s
	}
	if s[stage].IsZero() {
		s[stage] = now
	}
}

// sawEndpoints records the Ready endpoints of a slice (targetRef UID).
func (k *endpointTracker) sawEndpoints(eps []discoveryv1.Endpoint, stage int, now time.Time) {
	for _, ep := range eps {
		if ep.TargetRef == nil || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
			continue
		}
		k.saw(ep.TargetRef.UID, stage, now)
	}
}

// at returns when stage showed uid.
func (k *endpointTracker) at(uid types.UID, stage int) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if s := k.seen[uid]; s != nil {
		return s[stage]
	}
	return time.Time{}
}

// counts returns a copy of the write counters.
func (k *endpointTracker) counts() (own, imported, host int, spec, other, deletes map[string]int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ownSliceWrites, k.importedSliceWrite, k.hostSliceWrites, maps.Clone(k.workSpecWrites), maps.Clone(k.workOtherWrites),
		maps.Clone(k.workDeletes)
}

// hostAt returns when the control plane's copies first listed uid Ready.
func (k *endpointTracker) hostAt(uid types.UID) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hostSeen[uid]
}

// stagesOf returns when each stage showed uid.
func (k *endpointTracker) stagesOf(uid types.UID) [stages]time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if s := k.seen[uid]; s != nil {
		return *s
	}
	return [stages]time.Time{}
}

// informed starts an informer of factory's and fails t unless it syncs;
// the factory stops when t ends.
func informed(t *testing.T, what string, inf cache.SharedIndexInformer, start func(<-chan struct{}), shutdown func(), h cache.ResourceEventHandler) {
	t.Helper()
	if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		t.Logf("watch of %s: %v", what, err)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(h); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		shutdown()
	})
	start(ctx.Done())
	if !cache.WaitForCacheSync(t.Context().Done(), inf.HasSynced) {
		t.Fatalf("%s never synced", what)
	}
}

// watchSlices tracks the Ready endpoints of member's EndpointSlices of
// service, as stage, and counts their writes.
func (k *endpointTracker) watchSlices(t *testing.T, c kubernetes.Interface, member, ns, service string, stage int) {
	t.Helper()
	k.watchEndpointSlices(t, c, member+"'s EndpointSlices of "+service, ns, service, func(s *discoveryv1.EndpointSlice, now time.Time) {
		if stage == stageOwn {
			k.ownSliceWrites++
		} else {
			k.importedSliceWrite++
		}
		k.sawEndpoints(s.Endpoints, stage, now)
	})
}

// watchHostSlices tracks the Ready endpoints of the control plane's
// EndpointSlices of derived-<service> (the copies of the provider's
// slices), and counts their writes.
func (k *endpointTracker) watchHostSlices(t *testing.T, c kubernetes.Interface, ns, service string) {
	t.Helper()
	k.watchEndpointSlices(t, c, "the control plane's EndpointSlices of derived-"+service, ns, "derived-"+service, func(s *discoveryv1.EndpointSlice, now time.Time) {
		k.hostSliceWrites++
		for _, ep := range s.Endpoints {
			if ep.TargetRef == nil || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
				continue
			}
			if _, ok := k.hostSeen[ep.TargetRef.UID]; !ok {
				k.hostSeen[ep.TargetRef.UID] = now
			}
		}
	})
}

// watchEndpointSlices calls seen, under k.mu, with each version of the
// EndpointSlices of service in ns that c serves.
func (k *endpointTracker) watchEndpointSlices(t *testing.T, c kubernetes.Interface, what, ns, service string, seen func(s *discoveryv1.EndpointSlice, now time.Time)) {
	t.Helper()
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = discoveryv1.LabelServiceName + "=" + service }))
	on := func(obj any) {
		s, ok := obj.(*discoveryv1.EndpointSlice)
		if !ok {
			return
		}
		now := time.Now()
		k.mu.Lock()
		defer k.mu.Unlock()
		seen(s, now)
	}
	informed(t, what, f.Discovery().V1().EndpointSlices().Informer(), f.Start, f.Shutdown,
		cache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) }})
}

// watchPods tracks when member1's pods of selector become Ready.
func (k *endpointTracker) watchPods(t *testing.T, c kubernetes.Interface, ns, selector string) {
	t.Helper()
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	seen := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Status.PodIP == "" {
			return
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				now := time.Now()
				k.mu.Lock()
				k.saw(p.UID, stageReady, now)
				k.mu.Unlock()
			}
		}
	}
	informed(t, "member1's pods", f.Core().V1().Pods().Informer(), f.Start, f.Shutdown,
		cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }})
}

// watchWorks tracks the Works of service ns/name in every execution
// namespace: the endpoints their EndpointSlice carries (collected ones in
// karmada-es-<provider>, dispatched ones in karmada-es-<importer>) and
// their writes.
func (k *endpointTracker) watchWorks(t *testing.T, kc versioned.Interface, ns, name, provider, importer string) {
	t.Helper()
	f := flotillainformers.NewSharedInformerFactoryWithOptions(kc, 0, flotillainformers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = networkingv1alpha1.EndpointSliceNamespaceLabel + "=" + ns + "," + networkingv1alpha1.EndpointSliceNameLabel + "=" + name
	}))
	seen := func(old, cur *workv1alpha1.Work) {
		now := time.Now()
		stage := -1
		switch cur.Namespace {
		case "karmada-es-" + provider:
			stage = stageCollected
		case "karmada-es-" + importer:
			stage = stageDispatch
		}
		var eps []discoveryv1.Endpoint
		if stage >= 0 && len(cur.Spec.Workload.Manifests) == 1 {
			var s discoveryv1.EndpointSlice
			if err := json.Unmarshal(cur.Spec.Workload.Manifests[0].Raw, &s); err == nil && s.Kind == "EndpointSlice" {
				eps = s.Endpoints
			}
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		if old == nil || old.Generation != cur.Generation {
			k.workSpecWrites[cur.Namespace]++
		} else if old.ResourceVersion != cur.ResourceVersion {
			k.workOtherWrites[cur.Namespace]++
		}
		if stage >= 0 {
			k.sawEndpoints(eps, stage, now)
		}
	}
	work := func(obj any) *workv1alpha1.Work {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		w, _ := obj.(*workv1alpha1.Work)
		return w
	}
	informed(t, "the Works of "+ns+"/"+name, f.Work().V1alpha1().Works().Informer(), f.Start, f.Shutdown, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if w := work(obj); w != nil {
				seen(nil, w)
			}
		},
		UpdateFunc: func(old, cur any) {
			if o, n := work(old), work(cur); o != nil && n != nil {
				seen(o, n)
			}
		},
		DeleteFunc: func(obj any) {
			if w := work(obj); w != nil {
				k.mu.Lock()
				k.workDeletes[w.Namespace]++
				k.mu.Unlock()
			}
		},
	})
}

// mcsCRDsInBenchMembers propagates the MCS CRDs flotilla-apiserver installs
// on the host to every member, as the seed does, and waits until every
// Cluster lists both kinds. The policy stays: the CRDs are the members' API
// for the rest of the run.
func mcsCRDsInBenchMembers(t *testing.T, kc versioned.Interface) {
	t.Helper()
	framework.Apply(t, `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: mcs-crds}
spec:
  resourceSelectors:
  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: serviceexports.multicluster.x-k8s.io}
  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: serviceimports.multicluster.x-k8s.io}
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
`)
	serves := func(c *clusterv1alpha1.Cluster, resource string) bool {
		for _, e := range c.Status.APIEnablements {
			if e.GroupVersion == multiclusterv1alpha1.SchemeGroupVersion.String() &&
				slices.ContainsFunc(e.Resources, func(r clusterv1alpha1.APIResource) bool { return r.Name == resource }) {
				return true
			}
		}
		return false
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, m := range benchMembers {
			c, err := kc.ClusterV1alpha1().Clusters().Get(ctx, m, metav1.GetOptions{})
			if err != nil || !serves(c, multiclusterv1alpha1.ServiceExportResource) || !serves(c, multiclusterv1alpha1.ServiceImportResource) {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("the members do not serve the MCS API: %v", err)
	}
}

// TestMCSEndpointPropagation (docs/performance.md, "Multi-cluster
// services"): a Service of member1 exported (ServiceExport propagated to
// member1) and imported into member3 (ServiceImport propagated there). n
// pods of the Service are created in member1 one at a time, each once the
// previous one's address reached member3. Measured per pod, from its Ready
// (a watch of member1's pods): its address in member1's own EndpointSlice
// (the floor) and in member3's EndpointSlice of derived-<svc>, and in the
// control plane's copy of member1's slice; and the writes per change: the
// Works in the provider's execution namespace (the collected slice) and in
// the importer's (the dispatched one), and the host's EndpointSlices (the
// copy).
func TestMCSEndpointPropagation(t *testing.T) {
	n := benchSize("FLOTILLA_BENCH_MCS", 200)
	hc, kc := framework.FastClients(t)
	m1, m3 := memberClient(t, "member1"), memberClient(t, "member3")
	const ns, svc, app = "bench-mcs", "web", "bench-mcs"
	mcsCRDsInBenchMembers(t, kc)
	waitNamespace(t, hc, ns)
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		_ = hc.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		_ = m1.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  selector: {app: %[3]s}
  ports: [{name: http, port: 80, targetPort: 80}]
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: %[2]s, namespace: %[1]s}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: export, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Service, name: %[2]s}
  - {apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceExport, name: %[2]s}
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  type: ClusterSetIP
  ports: [{name: http, port: 80, protocol: TCP}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: import, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceImport, name: %[2]s}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`, ns, svc, app))

	// Ready to measure: member1 serves the Service, member3 the derived one.
	if err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if _, err := m1.CoreV1().Services(ns).Get(ctx, svc, metav1.GetOptions{}); err != nil {
			return false, nil
		}
		_, err := m3.CoreV1().Services(ns).Get(ctx, "derived-"+svc, metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("member1's Service %s or member3's derived-%s never came: %v", svc, svc, err)
	}

	k := newEndpointTracker()
	k.watchPods(t, m1, ns, "app="+app)
	k.watchSlices(t, m1, "member1", ns, svc, stageOwn)
	k.watchSlices(t, m3, "member3", ns, "derived-"+svc, stageImported)
	k.watchWorks(t, kc, ns, svc, "member1", "member3")
	k.watchHostSlices(t, hc, ns, svc)
	ownBefore, importedBefore, hostBefore, specBefore, otherBefore, deletesBefore := k.counts()
	m := newFlotillaMetrics(t)
	before := m.scrape(t)
	hostEventsBefore := hostWrites(t, hc, "events")
	hostSlicesBefore := hostWrites(t, hc, "endpointslices")

	var uids []types.UID
	start := time.Now()
	for i := range n {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%04d", i), Namespace: ns, Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}}
		created, err := m1.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids = append(uids, created.UID)
		if err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return !k.at(created.UID, stageImported).IsZero(), nil
		}); err != nil {
			t.Fatalf("pod %s (%d of %d): its address did not reach member3's derived-%s within a minute (stages %v)", p.Name, i+1, n, svc, k.stagesOf(created.UID))
		}
	}
	took := time.Since(start)
	// The last writes of the last change (status, the slice's own).
	time.Sleep(2 * time.Second)
	after := m.scrape(t)
	hostEventsAfter := hostWrites(t, hc, "events")
	hostSlicesAfter := hostWrites(t, hc, "endpointslices")
	ownAfter, importedAfter, hostAfter, specAfter, otherAfter, deletesAfter := k.counts()

	// Per change: the time from Ready to each later stage, and between
	// consecutive stages.
	var fromReady [stages][]time.Duration
	var hop [stages][]time.Duration
	var beyond, hostFromReady, hostBeyond []time.Duration
	for _, uid := range uids {
		at := k.stagesOf(uid)
		h := k.hostAt(uid)
		if h.IsZero() {
			t.Fatalf("pod %s: never listed in the control plane's copy (stages %v)", uid, at)
		}
		hostFromReady = append(hostFromReady, h.Sub(at[stageReady]))
		hostBeyond = append(hostBeyond, h.Sub(at[stageOwn]))
	}
	for _, uid := range uids {
		at := k.stagesOf(uid)
		for s := 1; s < stages; s++ {
			if at[s].IsZero() || at[stageReady].IsZero() {
				t.Fatalf("pod %s: stage %q not seen (stages %v)", uid, stageNames[s], at)
			}
			fromReady[s] = append(fromReady[s], at[s].Sub(at[stageReady]))
			hop[s] = append(hop[s], at[s].Sub(at[s-1]))
		}
		beyond = append(beyond, at[stageImported].Sub(at[stageOwn]))
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%6.0f ms", float64(d.Microseconds())/1000) }
	pp := func(d []time.Duration) string {
		return fmt.Sprintf("P50 %s  P99 %s  max %s", ms(percentile(d, 0.50)), ms(percentile(d, 0.99)), ms(percentile(d, 1)))
	}
	p99Beyond := percentile(beyond, 0.99)
	goal := "met"
	if p99Beyond > time.Second {
		goal = "NOT met"
	}

	per := func(m map[string]int, b map[string]int, ns string) float64 { return float64(m[ns]-b[ns]) / float64(n) }
	var b strings.Builder
	fmt.Fprintf(&b, "multi-cluster services: %d pods of Service %s/%s created in member1 one at a time (each once the previous reached member3), exported from member1, imported into member3; %.1f s\n",
		n, ns, svc, took.Seconds())
	fmt.Fprintf(&b, "  from the pod's Ready (watch of member1's pods) to its address in:\n")
	for s := 1; s < stages; s++ {
		fmt.Fprintf(&b, "    %-40s %s\n", stageNames[s], pp(fromReady[s]))
	}
	fmt.Fprintf(&b, "  derived beyond the floor (member3's slice - member1's slice, per change): %s (goal P99 <= 1 s: %s)\n", pp(beyond), goal)
	fmt.Fprintf(&b, "  the control plane's copy (imported-member1-… of derived-%s on the host): from Ready %s; beyond the floor %s\n",
		svc, pp(hostFromReady), pp(hostBeyond))
	fmt.Fprintf(&b, "  hops (each stage from the one before):\n")
	for s := 1; s < stages; s++ {
		fmt.Fprintf(&b, "    %-40s %s\n", stageNames[s], pp(hop[s]))
	}
	fmt.Fprintf(&b, "  writes per change (bench's watches): member1's own EndpointSlices %.2f; Works created or spec changed: karmada-es-member1 (collect) %.2f, karmada-es-member3 (dispatch, the consuming cluster) %.2f; other Work updates (status): %.2f / %.2f; Work deletes %d / %d; member3's imported EndpointSlices %.2f\n",
		float64(ownAfter-ownBefore)/float64(n), per(specAfter, specBefore, "karmada-es-member1"), per(specAfter, specBefore, "karmada-es-member3"),
		per(otherAfter, otherBefore, "karmada-es-member1"), per(otherAfter, otherBefore, "karmada-es-member3"),
		deletesAfter["karmada-es-member1"]-deletesBefore["karmada-es-member1"], deletesAfter["karmada-es-member3"]-deletesBefore["karmada-es-member3"],
		float64(importedAfter-importedBefore)/float64(n))
	d := queueDelta(before, after)
	fmt.Fprintf(&b, "  host kube-apiserver: event writes %.2f per change; EndpointSlice writes served %.2f per change, seen by the bench's watch %.2f\n",
		(hostEventsAfter-hostEventsBefore)/float64(n), (hostSlicesAfter-hostSlicesBefore)/float64(n), float64(hostAfter-hostBefore)/float64(n))
	fmt.Fprintf(&b, "  flotilla-apiserver, requests between the first pod and the end:\n%s", byCluster(t, writeBreakdown(before, after, float64(n))))
	fmt.Fprintf(&b, "  flotilla-apiserver queues over the run:\n%s", queueSummary(d))
	record(t, "mcs.txt", b.String())
}

// byCluster names the clusters of writeBreakdown's lines ("sent to
// 127.0.0.1:<port>") and counts per change rather than per template.
func byCluster(t *testing.T, breakdown string) string {
	t.Helper()
	servers := map[string]string{strings.TrimPrefix(framework.Env.Host.Server, "https://"): "host"}
	for _, m := range benchMembers {
		servers[strings.TrimPrefix(framework.Member(t, m).Server, "https://")] = m
	}
	var b strings.Builder
	for line := range strings.Lines(breakdown) {
		f := strings.Fields(line)
		if len(f) < 6 { // <key...> <count> <per> per template
			b.WriteString(line)
			continue
		}
		key := f[:len(f)-4]
		if len(key) == 4 && key[0] == "sent" && servers[key[2]] != "" {
			key[2] = servers[key[2]]
		}
		fmt.Fprintf(&b, "    %-60s %7s  %5s per change\n", strings.Join(key, " "), f[len(f)-4], f[len(f)-3])
	}
	return b.String()
}
