package soak

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

const (
	namespaces = 10
	// pool is about how many templates (half Deployments, half
	// ConfigMaps) live at once: the workload makes them before the clock
	// starts, so that the heap measured holds as much data throughout.
	pool = 120
	// opEvery is the pace of template creations, changes and deletions.
	opEvery = time.Second
	// memberEvery and memberDown: a member's kube-apiserver is stopped
	// for memberDown every memberEvery minutes (from the second), the
	// members in turn.
	memberEvery = 5
	memberDown  = 30 * time.Second
	// killEvery: the leader replica is killed with SIGKILL every killEvery
	// minutes (from the eighth), and started again killRestart later.
	killEvery   = 15
	killRestart = 5 * time.Second
	// settle bounds the wait, at each minute's sample, for the members
	// to match their templates with the workload paused.
	settle = 2 * time.Minute
	// revAnnotation is a template's revision, which the test bumps.
	revAnnotation = "soak.flotilla.io/rev"
)

var members = []string{"member1", "member2", "member3"}

// TestSoak runs the workload and the faults for FLOTILLA_SOAK and records
// a row per replica every minute (_output/soak/soak.csv, the figures in
// _output/bench/soak). Goal: from the tenth minute on, the heap and
// goroutines of each replica grow less than 5 %, and the members match
// their templates again after every fault.
func TestSoak(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	ctx := t.Context()
	setUp(t)
	w := newWorkload(t)
	w.seed(t)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var running sync.WaitGroup
	running.Go(func() { w.mutate(wctx) })
	running.Go(func() { w.churnPods(wctx) })
	running.Go(func() { w.read(wctx) })
	for i := range 10 {
		running.Go(func() { w.watch(wctx, "proxy", i) })
		running.Go(func() { w.watch(wctx, "search", i) })
	}

	rec := newRecording(t)
	start := time.Now()
	minutes := int(soakFor / time.Minute)
	var faults sync.WaitGroup
	for m := 1; m <= minutes; m++ {
		select {
		case <-ctx.Done():
			t.Fatal("the test's context ended")
		case <-time.After(time.Until(start.Add(time.Duration(m) * time.Minute))):
		}
		var fault string
		if m%memberEvery == 2 {
			member := members[(m/memberEvery)%len(members)]
			fault = "stopped " + member
			faults.Go(func() { w.restartMember(t, member) })
		}
		if m%killEvery == 8 {
			leader, err := framework.Env.FlotillaLeader(ctx)
			if err == nil && leader >= 0 {
				fault = strings.TrimPrefix(fault+"; killed replica "+strconv.Itoa(leader), "; ")
				faults.Go(func() { w.killReplica(t, leader) })
			}
		}
		rec.sample(t, m, fault, w)
	}
	stop()
	running.Wait()
	faults.Wait()
	rec.finish(t, w)
}

// setUp caches Deployments and pods for search (samples/search.yaml, as
// `make up` does) and makes the namespaces, each with a policy
// propagating its labelled Deployments and ConfigMaps to every member.
func setUp(t *testing.T) {
	t.Helper()
	framework.ApplySample(t, "search.yaml")
	var b strings.Builder
	for i := range namespaces {
		fmt.Fprintf(&b, `apiVersion: v1
kind: Namespace
metadata: {name: soak-%[1]d}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: soak, namespace: soak-%[1]d}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {soak: "yes"}}}
    - {apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {soak: "yes"}}}
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
`, i)
	}
	framework.Apply(t, b.String())
}

// workload drives the templates, the members' pods and the readers.
type workload struct {
	t      *testing.T
	host   kubernetes.Interface
	member map[string]kubernetes.Interface
	// paused: the sampler holds it while it waits for the members to
	// match and reads the replicas' figures; each template operation, pod
	// deletion and read holds it for reading (the watches stay open).
	paused sync.RWMutex
	// down is the member stopped now ("" if none).
	down atomic.Value
	next atomic.Int64

	mu        sync.Mutex
	templates map[string]int // "kind/namespace/name" → revision
	ops       map[string]int
	reads     map[string]int
	failed    map[string]int
	reopened  map[string]int
}

func newWorkload(t *testing.T) *workload {
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	w := &workload{t: t, host: kubernetes.NewForConfigOrDie(cfg), member: map[string]kubernetes.Interface{},
		templates: map[string]int{}, ops: map[string]int{}, reads: map[string]int{}, failed: map[string]int{}, reopened: map[string]int{}}
	for _, m := range members {
		mc, err := framework.Member(t, m).RESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		mc.QPS, mc.Burst = 50, 100
		w.member[m] = kubernetes.NewForConfigOrDie(mc)
	}
	w.down.Store("")
	return w
}

func (w *workload) count(m map[string]int, key string) {
	w.mu.Lock()
	m[key]++
	w.mu.Unlock()
}

// seed creates pool templates and waits for the members to match them.
func (w *workload) seed(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	for range pool {
		if err := w.write(ctx, w.newKey(), 1); err != nil {
			t.Fatalf("seeding the templates: %v", err)
		}
	}
	for {
		n, unreachable := w.diff(ctx)
		if n == 0 && len(unreachable) == 0 {
			break
		}
		if time.Since(start) > 5*time.Minute {
			t.Fatalf("the members differ from the %d templates seeded by %d (unreachable %v) after 5 minutes", pool, n, unreachable)
		}
		time.Sleep(time.Second)
	}
	t.Logf("%d templates seeded and propagated in %s", pool, time.Since(start).Round(time.Second))
}

// mutate creates, changes and deletes templates, one every opEvery.
func (w *workload) mutate(ctx context.Context) {
	tick := time.NewTicker(opEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.paused.RLock()
		op, err := w.op(ctx)
		w.paused.RUnlock()
		if err != nil && ctx.Err() == nil {
			w.count(w.failed, "template "+op)
			w.t.Logf("template %s: %v", op, err)
		}
	}
}

func (w *workload) op(ctx context.Context) (string, error) {
	w.mu.Lock()
	keys := make([]string, 0, len(w.templates))
	for k := range w.templates {
		keys = append(keys, k)
	}
	w.mu.Unlock()
	r := rand.Float64()
	switch {
	case len(keys) < pool/2 || len(keys) < pool && r < 0.35:
		w.count(w.ops, "create")
		return "create", w.write(ctx, w.newKey(), 1)
	case len(keys) > pool*6/5 || r < 0.65:
		key := keys[rand.IntN(len(keys))]
		w.count(w.ops, "delete")
		return "delete", w.write(ctx, key, 0)
	default:
		key := keys[rand.IntN(len(keys))]
		w.mu.Lock()
		rev := w.templates[key] + 1
		w.mu.Unlock()
		w.count(w.ops, "update")
		return "update", w.write(ctx, key, rev)
	}
}

// newKey names a new template: a Deployment or a ConfigMap, in one of the
// namespaces.
func (w *workload) newKey() string {
	kind := "Deployment"
	if rand.IntN(2) == 0 {
		kind = "ConfigMap"
	}
	return fmt.Sprintf("%s/soak-%d/t-%d", kind, rand.IntN(namespaces), w.next.Add(1))
}

// write makes the template of key be at rev (0: deleted).
func (w *workload) write(ctx context.Context, key string, rev int) error {
	kind, ns, name := split(key)
	var err error
	switch {
	case rev == 0 && kind == "Deployment":
		err = w.host.AppsV1().Deployments(ns).Delete(ctx, name, metav1.DeleteOptions{})
	case rev == 0:
		err = w.host.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
	case rev == 1 && kind == "Deployment":
		_, err = w.host.AppsV1().Deployments(ns).Create(ctx, deployment(ns, name), metav1.CreateOptions{})
	case rev == 1:
		_, err = w.host.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"soak": "yes"}, Annotations: map[string]string{revAnnotation: "1"}},
			Data:       map[string]string{"rev": "1"}}, metav1.CreateOptions{})
	case kind == "Deployment":
		// A new pod template too: the members roll their pods.
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}},"spec":{"template":{"metadata":{"annotations":{%q:"%d"}}}}}`, revAnnotation, rev, revAnnotation, rev)
		_, err = w.host.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	default:
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}},"data":{"rev":"%d"}}`, revAnnotation, rev, rev)
		_, err = w.host.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if rev == 0 {
		delete(w.templates, key)
	} else {
		w.templates[key] = rev
	}
	return nil
}

func split(key string) (kind, ns, name string) {
	parts := strings.SplitN(key, "/", 3)
	return parts[0], parts[1], parts[2]
}

func deployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"soak": "yes"}, Annotations: map[string]string{revAnnotation: "1"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{revAnnotation: "1"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
}

// churnPods deletes a few pods of a running member every 20 s; their
// Deployments make them again.
func (w *workload) churnPods(ctx context.Context) {
	tick := time.NewTicker(20 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		m := members[rand.IntN(len(members))]
		if w.down.Load() == m {
			continue
		}
		w.paused.RLock()
		w.deletePods(ctx, m, fmt.Sprintf("soak-%d", rand.IntN(namespaces)))
		w.paused.RUnlock()
	}
}

// deletePods deletes up to three pods of namespace ns in member m.
func (w *workload) deletePods(ctx context.Context, m, ns string) {
	pods, err := w.member[m].CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i, p := range pods.Items {
		if i >= 3 {
			break
		}
		if err := w.member[m].CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err == nil {
			w.count(w.ops, "pod deleted")
		}
	}
}

// read lists pods of a member through clusters/{name}/proxy and
// Deployments of every member through search, every 5 s.
func (w *workload) read(ctx context.Context) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		m := members[i%len(members)]
		w.paused.RLock()
		for api, path := range map[string]string{
			"proxy":  "/apis/cluster.karmada.io/v1alpha1/clusters/" + m + "/proxy/api/v1/pods",
			"search": "/apis/search.karmada.io/v1alpha1/search/cache/apis/apps/v1/deployments",
		} {
			_, err := w.host.CoreV1().RESTClient().Get().AbsPath(path).Param("limit", "500").DoRaw(ctx)
			switch {
			case err == nil:
				w.count(w.reads, api)
			case ctx.Err() == nil && (api != "proxy" || w.down.Load() != m):
				w.count(w.failed, api+" read")
				w.t.Logf("%s read: %v", api, err)
			}
		}
		w.paused.RUnlock()
	}
}

// watch keeps a watch of pods open through api, opened again whenever it
// ends (a member stopped, a replica killed, the server's timeout).
func (w *workload) watch(ctx context.Context, api string, i int) {
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		w.t.Error(err)
		return
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		w.t.Error(err)
		return
	}
	client := &http.Client{Transport: rt}
	path := "/apis/cluster.karmada.io/v1alpha1/clusters/" + members[i%len(members)] + "/proxy/api/v1/pods?watch=1"
	if api == "search" {
		path = "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/pods?watch=1"
	}
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		if ctx.Err() == nil {
			w.count(w.reopened, api)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// restartMember stops member's kube-apiserver for memberDown.
func (w *workload) restartMember(t *testing.T, member string) {
	w.down.Store(member)
	defer w.down.Store("")
	api := framework.Member(t, member).Process("kube-apiserver")
	api.Stop(0)
	time.Sleep(memberDown)
	if err := api.Restart(); err != nil {
		t.Errorf("starting %s again: %v", member, err)
	}
}

// killReplica kills replica i and starts it again killRestart later.
func (w *workload) killReplica(t *testing.T, i int) {
	if err := framework.Env.KillReplica(i); err != nil {
		t.Errorf("killing replica %d: %v", i, err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Its endpoint goes, as the endpoints controller removes a dead pod's.
	if err := framework.Env.SyncFlotillaEndpoints(ctx); err != nil {
		t.Errorf("withdrawing replica %d: %v", i, err)
	}
	time.Sleep(killRestart)
	if err := framework.Env.RestartReplica(ctx, i); err != nil {
		t.Errorf("starting replica %d again: %v", i, err)
	}
}

// diff counts the member objects that differ from their templates
// (missing, at another revision, or left after the template went), and
// tells the members it could not read.
func (w *workload) diff(ctx context.Context) (int, []string) {
	want := map[string]string{}
	deps, err := w.host.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: "soak=yes"})
	if err != nil {
		return -1, []string{"host"}
	}
	for _, d := range deps.Items {
		want["Deployment/"+d.Namespace+"/"+d.Name] = d.Annotations[revAnnotation]
	}
	cms, err := w.host.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "soak=yes"})
	if err != nil {
		return -1, []string{"host"}
	}
	for _, c := range cms.Items {
		want["ConfigMap/"+c.Namespace+"/"+c.Name] = c.Annotations[revAnnotation]
	}
	n := 0
	var unreachable []string
	for _, m := range members {
		have := map[string]string{}
		ds, err := w.member[m].AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: "soak=yes"})
		if err != nil {
			unreachable = append(unreachable, m)
			continue
		}
		for _, d := range ds.Items {
			have["Deployment/"+d.Namespace+"/"+d.Name] = d.Annotations[revAnnotation]
		}
		cs, err := w.member[m].CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "soak=yes"})
		if err != nil {
			unreachable = append(unreachable, m)
			continue
		}
		for _, c := range cs.Items {
			have["ConfigMap/"+c.Namespace+"/"+c.Name] = c.Annotations[revAnnotation]
		}
		for k, rev := range want {
			if have[k] != rev {
				n++
			}
		}
		for k := range have {
			if _, ok := want[k]; !ok {
				n++
			}
		}
	}
	return n, unreachable
}

// recording keeps the rows and writes them as CSV.
type recording struct {
	rows []Row
	out  *os.File
	csv  *csv.Writer
	dir  string
}

// profiles: with FLOTILLA_SOAK_PROFILES=1 the soak keeps the heap profile
// it takes of each replica every minute:
// _output/soak/profiles/m<minute>-r<replica>-<role>.pprof, to compare two
// minutes of a span with go tool pprof -base.
var profiles = os.Getenv("FLOTILLA_SOAK_PROFILES") == "1"

// liveHeap takes replica i's heap profile at minute, after a collection
// it forces, and returns the heap in use it records (0 when the replica
// did not answer); the profile is kept when profiles is set.
func (r *recording) liveHeap(t *testing.T, minute, i int, leader bool) float64 {
	raw, err := framework.ReplicaHeapProfile(t.Context(), i)
	if err != nil {
		t.Logf("minute %d: heap profile of replica %d: %v", minute, i, err)
		return 0
	}
	live, err := LiveOfProfile(raw)
	if err != nil {
		t.Logf("minute %d: heap profile of replica %d: %v", minute, i, err)
	}
	if profiles {
		r.saveProfile(t, minute, i, leader, raw)
	}
	return live
}

// saveProfile keeps replica i's heap profile of minute.
func (r *recording) saveProfile(t *testing.T, minute, i int, leader bool, raw []byte) {
	role := "standby"
	if leader {
		role = "leader"
	}
	dir := filepath.Join(r.dir, "profiles")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("profiles: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%02d-r%d-%s.pprof", minute, i, role)), raw, 0o644); err != nil {
		t.Logf("profiles: %v", err)
	}
}

func newRecording(t *testing.T) *recording {
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "_output", "soak")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "soak.csv"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	r := &recording{out: f, csv: csv.NewWriter(f), dir: dir}
	_ = r.csv.Write(CSVHeader)
	r.csv.Flush()
	return r
}

// sample pauses the workload, waits for the members to match their
// templates, and records each replica's figures before it resumes.
func (r *recording) sample(t *testing.T, minute int, fault string, w *workload) {
	ctx := t.Context()
	w.paused.Lock()
	start := time.Now()
	first, _ := w.diff(ctx)
	converge := -1.0
	for time.Since(start) < settle {
		n, unreachable := w.diff(ctx)
		if n == 0 && len(unreachable) == 0 {
			converge = time.Since(start).Seconds()
			break
		}
		time.Sleep(time.Second)
	}
	// The figures are read with the workload still paused: the live heap
	// is then what the replicas keep, not the work in flight (a search
	// list's result, a burst of events), which moved single samples by
	// 10-20 % when they were read with the workload running.
	defer w.paused.Unlock()
	leader, _ := framework.Env.FlotillaLeader(ctx)
	for i := range framework.Env.Replicas() {
		w.mu.Lock()
		templates := len(w.templates)
		w.mu.Unlock()
		rw := Row{Minute: minute, Replica: i, Leader: i == leader, Diff: first, Converge: converge, Fault: fault, Templates: templates}
		if ss, err := framework.ReplicaMetrics(ctx, i); err == nil {
			rw.Up = true
			rw.Started = ss.Sum("process_start_time_seconds", nil)
			rw.Heap = ss.Sum("go_memstats_heap_inuse_bytes", nil) / (1 << 20)
			rw.GCGoal = ss.Sum("go_memstats_next_gc_bytes", nil) / (1 << 20)
			rw.RSS = ss.Sum("process_resident_memory_bytes", nil) / (1 << 20)
			rw.Goroutines = ss.Sum("go_goroutines", nil)
			rw.FDs = ss.Sum("process_open_fds", nil)
			rw.Queue = ss.Sum("workqueue_depth", nil)
		}
		if rw.Up {
			// After the figures above: the profile forces a collection.
			rw.Live = r.liveHeap(t, minute, i, rw.Leader)
		}
		r.rows = append(r.rows, rw)
		_ = r.csv.Write(rw.Record())
		t.Logf("minute %d replica %d leader %v: heap %.1f MiB (GC goal %.1f, live %.1f), RSS %.1f MiB, %v goroutines, %v fds, queues %v; %d templates, diff %d, matched after %.1f s %s",
			minute, i, rw.Leader, rw.Heap, rw.GCGoal, rw.Live, rw.RSS, rw.Goroutines, rw.FDs, rw.Queue, rw.Templates, rw.Diff, rw.Converge, rw.Fault)
	}
	r.csv.Flush()
	if converge < 0 {
		n, unreachable := w.diff(ctx)
		t.Errorf("minute %d: the members still differ from their templates by %d (unreachable %v) after %s", minute, n, unreachable, settle)
	}
}

// finish records the figures and checks the goals.
func (r *recording) finish(t *testing.T, w *workload) {
	// The live heap after a forced collection (HeapFigure): heap in use
	// swings with the garbage made between collections, and the GC's goal
	// with the goroutines' stacks and when the last collection ran (its
	// growth is reported beside it).
	// The goal is judged leaving out the samples taken at a fault's minute
	// (Growth); the figure with them is reported beside it.
	live, _ := HeapFigure(r.rows)
	heapGrowth, heapSpans := Growth(r.rows, live, true)
	heapAll, _ := Growth(r.rows, live, false)
	goalGrowth, _ := Growth(r.rows, func(rw Row) float64 { return rw.GCGoal }, true)
	goGrowth, goSpans := Growth(r.rows, func(rw Row) float64 { return rw.Goroutines }, true)
	okHeap, okGo := heapSpans > 0, goSpans > 0
	var converges []float64
	worst, unmatched := 0.0, 0
	for _, rw := range r.rows {
		if rw.Replica != 0 {
			continue
		}
		if rw.Converge < 0 {
			unmatched++
			continue
		}
		converges = append(converges, rw.Converge)
		worst = max(worst, rw.Converge)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	growthText := func(g float64, ok bool) string {
		if !ok {
			return "n/a (no replica kept a role from its run's 10th minute for 10 minutes)"
		}
		return fmt.Sprintf("%.1f %%", 100*g)
	}
	text := fmt.Sprintf(`soak (make soak SOAK=%s): %d minutes, HA bed (2 replicas, 3-member etcd), 3 members
  operations %v; reads %v; watches reopened %v; failures %v
  growth while a replica keeps its role, from its run's 10th minute, leaving out the samples taken at a fault's minute: live heap after a forced GC %s (%s with them; the GC's goal %s), goroutines %s (goal < 5 %%; %d spans)
  members matched their templates at every minute's pause: %d of %d minutes, within %.1f s at worst
  data: _output/soak/soak.csv (plot: go run ./hack/soakplot)
`, soakFor, len(r.rows)/max(1, framework.Env.Replicas()), w.ops, w.reads, w.reopened, w.failed,
		growthText(heapGrowth, okHeap), growthText(heapAll, okHeap), growthText(goalGrowth, okHeap), growthText(goGrowth, okGo), heapSpans, len(converges), len(converges)+unmatched, worst)
	framework.RecordBench(t, "soak", text)
	if okHeap && heapGrowth >= 0.05 {
		t.Errorf("heap grew %.1f %% (goal < 5 %%)", 100*heapGrowth)
	}
	if okGo && goGrowth >= 0.05 {
		t.Errorf("goroutines grew %.1f %% (goal < 5 %%)", 100*goGrowth)
	}
}
