package clusterstatus

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"
	"github.com/flotilla-io/flotilla/estimator"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
)

// The controller-level fixture: the Cluster lister over an indexer, the
// fake clientset recording the status patch, a fixed clock, a queue
// recording the delayed adds. The member is a pinned member client whose
// discovery (/readyz, /version, the API list) is an in-process HTTP
// handler (the probe goes through the discovery REST client, which a fake
// clientset lacks), and whose informers are staticInformers over its
// nodes and pods.

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const interval = 10 * time.Second

// The queue double of every controller test.
type (
	delayedKey     = workertest.Delayed
	recordingQueue = workertest.Queue
)

// fakeMember is what the member's API server answers.
type fakeMember struct {
	readyz     string // body of /readyz
	readyzCode int
	nodes      []*corev1.Node
	pods       []*corev1.Pod
}

// memberClientset is a fake clientset whose discovery reaches the handler.
type memberClientset struct {
	*k8sfake.Clientset
	disco discovery.DiscoveryInterface
}

func (m memberClientset) Discovery() discovery.DiscoveryInterface { return m.disco }

func (m fakeMember) handler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	var body any
	switch r.URL.Path {
	case "/readyz":
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(m.readyzCode)
		_, _ = w.Write([]byte(m.readyz))
		return
	case "/version":
		body = map[string]string{"gitVersion": "v1.31.2", "major": "1", "minor": "31"}
	case "/api":
		body = metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}}
	case "/apis":
		body = metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	case "/api/v1":
		body = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"get", "list"}},
			{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: []string{"get"}},
			{Name: "nodes", Kind: "Node", Verbs: []string{"get", "list"}},
		}}
	default:
		http.NotFound(w, r)
		return
	}
	_ = json.NewEncoder(w).Encode(body)
}

type fixture struct {
	ctrl   *Controller
	client *fake.Clientset
	queue  *recordingQueue
	// informers are the members' informers by name; ensured the members
	// whose informers the controller asked for.
	informers map[string]*staticInformers
	ensured   []string
}

func newFixture(t *testing.T, cluster *clusterv1alpha1.Cluster, m *fakeMember, opts Options) *fixture {
	t.Helper()
	clusters := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if cluster != nil {
		if err := clusters.Add(cluster); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{}
	if cluster != nil {
		f.client = fake.NewSimpleClientset(cluster.DeepCopy())
	} else {
		f.client = fake.NewSimpleClientset()
	}
	q := worker.NewQueue(ControllerName)
	t.Cleanup(q.ShutDown)
	f.queue = &recordingQueue{TypedRateLimitingInterface: q}
	members := member.NewCache(func(string, string) (*corev1.Secret, error) { t.Error("secret read"); return nil, nil })
	f.informers = map[string]*staticInformers{}
	if m != nil {
		srv := httptest.NewServer(http.HandlerFunc(m.handler))
		t.Cleanup(srv.Close)
		cfg := &rest.Config{Host: srv.URL}
		disco, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var cs kubernetes.Interface = memberClientset{Clientset: k8sfake.NewClientset(), disco: disco}
		members.Pin("member1", &member.Client{Config: cfg, Clientset: cs})
		// The member's node and pod informers have listed.
		f.informers["member1"] = &staticInformers{nodes: m.nodes, pods: m.pods, listed: true, since: fixedNow}
	}
	if opts.Interval == 0 {
		opts.Interval = interval
	}
	if opts.CacheSyncTimeout == 0 {
		opts.CacheSyncTimeout = time.Minute
	}
	f.ctrl = &Controller{
		clusters:        clusterlisters.NewClusterLister(clusters),
		client:          f.client,
		forgetClient:    members.Forget,
		forgetInformers: func(name string) { delete(f.informers, name) },
		queue:           f.queue,
		opts:            opts,
	}
	f.ctrl.setReconcilers(members.Get, func(name string, client *member.Client) Informers {
		if client == nil {
			t.Errorf("informers of %s asked for without a client", name)
		}
		f.ensured = append(f.ensured, name)
		return f.informers[name]
	}, func() time.Time { return fixedNow })
	return f
}

// patched returns the status the only request, a merge patch of the
// status subresource of member1, writes.
func (f *fixture) patched(t *testing.T) *clusterv1alpha1.ClusterStatus {
	t.Helper()
	acts := f.client.Actions()
	if len(acts) != 1 {
		t.Fatalf("got %d requests, want one status patch: %v", len(acts), acts)
	}
	p, ok := acts[0].(clienttesting.PatchAction)
	if !ok || p.GetName() != "member1" || p.GetSubresource() != "status" || p.GetResource().Resource != "clusters" || p.GetPatchType() != "application/merge-patch+json" {
		t.Fatalf("request %s %s %s/%s, want a merge patch of clusters/status member1", acts[0].GetVerb(), acts[0].GetResource().Resource, acts[0].GetSubresource(), p.GetName())
	}
	var body struct {
		Status *clusterv1alpha1.ClusterStatus `json:"status"`
	}
	if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
		t.Fatal(err)
	}
	return body.Status
}

func push(mods ...func(*clusterv1alpha1.Cluster)) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1", Generation: 2},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://member1"}}
	for _, m := range mods {
		m(c)
	}
	return c
}

func rl(cpu, pods string) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	if pods != "" {
		out[corev1.ResourcePods] = resource.MustParse(pods)
	}
	return out
}

func memberNode(name string, ready corev1.ConditionStatus) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: rl("4", "110"),
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
}

func pod(name, nodeName string, phase corev1.PodPhase, cpu string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:   corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: rl(cpu, "")}}}},
		Status: corev1.PodStatus{Phase: phase}}
}

// healthy is a member with two nodes (one Ready), a running pod, a pending
// one and a finished one.
func healthy() *fakeMember {
	return &fakeMember{readyz: "ok", readyzCode: http.StatusOK,
		nodes: []*corev1.Node{memberNode("n1", corev1.ConditionTrue), memberNode("n2", corev1.ConditionFalse)},
		pods: []*corev1.Pod{pod("running", "n1", corev1.PodRunning, "1"), pod("pending", "", corev1.PodPending, "500m"),
			pod("done", "n1", corev1.PodSucceeded, "2")}}
}

func readyCondition(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: status, Reason: reason, Message: msg, ObservedGeneration: 2}
}

// healthyStatus is what a probe of healthy() reports.
func healthyStatus() clusterv1alpha1.ClusterStatus {
	return clusterv1alpha1.ClusterStatus{
		KubernetesVersion: "v1.31.2",
		APIEnablements: []clusterv1alpha1.APIEnablement{{GroupVersion: "v1",
			Resources: []clusterv1alpha1.APIResource{{Name: "nodes", Kind: "Node"}, {Name: "pods", Kind: "Pod"}}}},
		Conditions: []metav1.Condition{
			readyCondition(metav1.ConditionTrue, ReasonClusterReady, MessageClusterReady),
			{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionTrue, Reason: "CompleteAPIEnablements",
				Message: "collected complete APIs from member cluster", ObservedGeneration: 2},
		},
		NodeSummary: &clusterv1alpha1.NodeSummary{TotalNum: 2, ReadyNum: 1},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{
			Allocatable: rl("8", "220"),
			Allocated:   rl("1", "1"),
			Allocating:  rl("500m", "1"),
		},
	}
}

var statusCmp = []cmp.Option{
	cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime"),
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
	cmpopts.EquateEmpty(),
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	wasReady := func(c *clusterv1alpha1.Cluster) { c.Status = healthyStatus() }
	notReady := func(m *fakeMember) *fakeMember {
		m.readyz, m.readyzCode = "[-]etcd failed", http.StatusInternalServerError
		return m
	}
	tests := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		member  *fakeMember
		opts    Options
		// wantStatus is the status patched (nil: no request).
		wantStatus *clusterv1alpha1.ClusterStatus
		// wantRequeue: probed again after the interval.
		wantRequeue bool
	}{
		{name: "healthy push member: Ready, version, APIs, summaries", cluster: push(), member: healthy(),
			wantStatus: ptrTo(healthyStatus()), wantRequeue: true},
		{name: "status up to date: no write", cluster: push(wasReady), member: healthy(), wantRequeue: true},
		{name: "a pod more: the summary patched", cluster: push(wasReady), wantRequeue: true,
			member: func() *fakeMember {
				m := healthy()
				m.pods = append(m.pods, pod("more", "n2", corev1.PodRunning, "1"))
				return m
			}(),
			wantStatus: func() *clusterv1alpha1.ClusterStatus {
				s := healthyStatus()
				s.ResourceSummary.Allocated = rl("2", "2")
				return &s
			}()},
		{name: "remedy actions are not this controller's: left out of the patch", member: healthy(), wantRequeue: true,
			cluster:    push(func(c *clusterv1alpha1.Cluster) { c.Status.RemedyActions = []string{"TrafficControl"} }),
			wantStatus: ptrTo(healthyStatus())},
		{name: "readyz fails once: within the threshold, the last status kept", cluster: push(wasReady), member: notReady(healthy()),
			opts: Options{FailureThreshold: time.Minute}, wantRequeue: true},
		{name: "readyz fails past the threshold: ClusterNotReady", cluster: push(wasReady), member: notReady(healthy()), wantRequeue: true,
			wantStatus: func() *clusterv1alpha1.ClusterStatus {
				s := healthyStatus()
				s.Conditions[0] = readyCondition(metav1.ConditionFalse, ReasonClusterNotReady, MessageClusterNotReady)
				return &s
			}()},
		{name: "never ready, readyz fails: ClusterNotReady at once", cluster: push(), member: notReady(healthy()),
			opts: Options{FailureThreshold: time.Minute}, wantRequeue: true,
			wantStatus: &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{
				readyCondition(metav1.ConditionFalse, ReasonClusterNotReady, MessageClusterNotReady)}}},
		{name: "no client for the member: ClusterNotReachable", cluster: push(), wantRequeue: true,
			wantStatus: &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{
				readyCondition(metav1.ConditionFalse, ReasonClusterNotReachable, `cluster "member1" has no secretRef`)}}},
		{name: "pull member: its agent reports", cluster: push(func(c *clusterv1alpha1.Cluster) { c.Spec.SyncMode = clusterv1alpha1.Pull }),
			member: healthy()},
		{name: "pull member in its own agent: reported", cluster: push(func(c *clusterv1alpha1.Cluster) { c.Spec.SyncMode = clusterv1alpha1.Pull }),
			member: healthy(), opts: Options{Agent: "member1"}, wantStatus: ptrTo(healthyStatus()), wantRequeue: true},
		{name: "another agent's member: not reported", cluster: push(), member: healthy(), opts: Options{Agent: "member2"}},
		{name: "cluster being deleted: nothing", member: healthy(),
			cluster: push(func(c *clusterv1alpha1.Cluster) { now := metav1.NewTime(fixedNow); c.DeletionTimestamp = &now })},
		{name: "cluster gone: nothing", member: healthy()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.cluster, tc.member, tc.opts)
			if err := f.ctrl.reconcile(context.Background(), "member1"); err != nil {
				t.Fatal(err)
			}
			if tc.wantStatus == nil {
				if acts := f.client.Actions(); len(acts) != 0 {
					t.Errorf("got requests %v, want none", acts)
				}
			} else if diff := cmp.Diff(tc.wantStatus, f.patched(t), statusCmp...); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			var want []delayedKey
			if tc.wantRequeue {
				want = []delayedKey{{Key: "member1", Delay: interval}}
			}
			if diff := cmp.Diff(want, f.queue.Delayed()); diff != "" {
				t.Errorf("requeues (-want +got):\n%s", diff)
			}
			if tc.cluster == nil || tc.cluster.DeletionTimestamp != nil {
				if _, ok := f.informers["member1"]; ok {
					t.Error("the member's informers were kept")
				}
			}
		})
	}
}

// A member whose caches have not listed is looked at again soon, and its
// status is not written until they have (Ready comes with its summary).
func TestReconcileCachesListing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, push(), healthy(), Options{})
	mc := f.informers["member1"]
	mc.listed = false
	if err := f.ctrl.reconcile(context.Background(), "member1"); err != nil {
		t.Fatal(err)
	}
	if acts := f.client.Actions(); len(acts) != 0 {
		t.Errorf("got requests %v, want none", acts)
	}
	want := []delayedKey{{Key: "member1", Delay: cacheSyncPoll}, {Key: "member1", Delay: interval}}
	if diff := cmp.Diff(want, f.queue.Delayed()); diff != "" {
		t.Errorf("requeues (-want +got):\n%s", diff)
	}
	// Past the timeout: an error, retried with backoff.
	mc.since = fixedNow.Add(-2 * time.Minute)
	if err := f.ctrl.reconcile(context.Background(), "member1"); err == nil {
		t.Error("no error past the cache sync timeout")
	}
	if acts := f.client.Actions(); len(acts) != 0 {
		t.Errorf("got requests %v, want none", acts)
	}
}

// staticInformers serve fixed nodes and pods as a member hub's informers
// do (member.Member).
type staticInformers struct {
	nodes  []*corev1.Node
	pods   []*corev1.Pod
	listed bool
	since  time.Time
}

func (s *staticInformers) Listed() bool             { return s.listed }
func (s *staticInformers) Since() time.Time         { return s.since }
func (s *staticInformers) NodeList() []*corev1.Node { return s.nodes }

func (s *staticInformers) BoundNodes() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range s.pods {
		if p.Spec.NodeName != "" && !terminal(p) && !seen[p.Spec.NodeName] {
			seen[p.Spec.NodeName] = true
			out = append(out, p.Spec.NodeName)
		}
	}
	return out
}

func (s *staticInformers) NodeUsage(node string) (estimator.Usage, error) {
	var on []*corev1.Pod
	for _, p := range s.pods {
		if p.Spec.NodeName == node {
			on = append(on, p)
		}
	}
	return estimator.PodsUsage(on), nil
}

func (s *staticInformers) UnboundUsage() (estimator.Usage, error) {
	var out []*corev1.Pod
	for _, p := range s.pods {
		if p.Spec.NodeName == "" && !terminal(p) {
			out = append(out, p)
		}
	}
	return estimator.PodsUsage(out), nil
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func ptrTo[T any](v T) *T { return &v }
