package eviction

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

var now = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

func cluster(name string, ready bool, taints ...corev1.Taint) *clusterv1alpha1.Cluster {
	status := metav1.ConditionTrue
	if !ready {
		status = metav1.ConditionFalse
	}
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{Taints: taints},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status}}}}
}

func deadTaint(added time.Time) corev1.Taint {
	at := metav1.NewTime(added)
	return corev1.Taint{Key: "dead", Effect: corev1.TaintEffectNoExecute, TimeAdded: &at}
}

func rb(mutate ...func(*workv1alpha2.ResourceBinding)) *workv1alpha2.ResourceBinding {
	b := &workv1alpha2.ResourceBinding{TypeMeta: metav1.TypeMeta{APIVersion: workv1alpha2.SchemeGroupVersion.String(), Kind: workv1alpha2.ResourceKindResourceBinding}, ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "nginx-deployment", ResourceVersion: "7", Generation: 3},
		Spec: workv1alpha2.ResourceBindingSpec{Replicas: 5, Placement: &policyv1alpha1.Placement{},
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "web", Name: "nginx", UID: "u-1"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m2", Replicas: 2}}}}
	for _, m := range mutate {
		m(b)
	}
	return b
}

// fixture records what one reconcile writes, records and requeues.
type fixture struct {
	patches []map[string]any
	// statusPatches are the writes to the status subresource.
	statusPatches []map[string]any
	events        *record.FakeRecorder
	requeued      []time.Duration
	err           error
}

func newFixture(err error) *fixture {
	events := record.NewFakeRecorder(10)
	events.IncludeObject = true // events on the binding and on its template are told apart
	return &fixture{err: err, events: events}
}

func (f *fixture) requeue(_ string, d time.Duration) { f.requeued = append(f.requeued, d) }

func listers(t *testing.T, objs ...any) (bindings, clusterlisters.ClusterLister) {
	t.Helper()
	rbIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	crbIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	clIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *workv1alpha2.ResourceBinding:
			err = rbIdx.Add(o)
		case *workv1alpha2.ClusterResourceBinding:
			err = crbIdx.Add(o)
		case *clusterv1alpha1.Cluster:
			err = clIdx.Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return bindings{rbs: worklisters.NewResourceBindingLister(rbIdx), crbs: worklisters.NewClusterResourceBindingLister(crbIdx)},
		clusterlisters.NewClusterLister(clIdx)
}

func (f *fixture) writeStatus(_ context.Context, key string, body []byte) error {
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		return err
	}
	f.statusPatches = append(f.statusPatches, p)
	return nil
}

// pausedCondition is "status reason" of the EvictionPaused condition the
// status patches wrote last ("" if none).
func (f *fixture) pausedCondition(t *testing.T) string {
	t.Helper()
	if len(f.statusPatches) == 0 {
		return ""
	}
	raw, err := json.Marshal(f.statusPatches[len(f.statusPatches)-1]["status"])
	if err != nil {
		t.Fatal(err)
	}
	var st workv1alpha2.ResourceBindingStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Conditions {
		if c.Type == workv1alpha2.EvictionPaused {
			return string(c.Status) + " " + c.Reason
		}
	}
	return "none"
}

func (f *fixture) write(_ context.Context, key string, body []byte) error {
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		return err
	}
	f.patches = append(f.patches, p)
	return f.err
}

func TestTaintManagerReconcile(t *testing.T) {
	notReadyFor := func(d time.Duration) *clusterv1alpha1.Cluster {
		c := cluster("m1", false, deadTaint(now))
		c.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-d))
		return c
	}
	for _, tc := range []struct {
		name        string
		objs        []any
		window      time.Duration
		quietSince  time.Duration // a partition was seen this long ago
		purge       policyv1alpha1.PurgeMode
		writeErr    error
		wantPatch   string // JSON of spec, "" for no write
		wantEvent   string
		wantRequeue string
		wantErr     bool
		// wantPaused is the EvictionPaused condition written ("status
		// reason"), "" for no status write.
		wantPaused string
	}{{
		name: "no taint: nothing",
		objs: []any{rb(), cluster("m1", true), cluster("m2", true)},
	}, {
		name:      "untolerated NoExecute on m1: m1 leaves, with a graceful task",
		objs:      []any{rb(), cluster("m1", true, deadTaint(now)), cluster("m2", true)},
		purge:     policyv1alpha1.PurgeModeGracefully,
		wantPatch: `{"clusters":[{"name":"m2","replicas":2}],"gracefulEvictionTasks":[{"fromCluster":"m1","purgeMode":"Gracefully","replicas":3,"reason":"TaintUntolerated","message":"cluster m1 has the NoExecute taint dead:NoExecute, which the placement does not tolerate; its replicas in m1 stay until it is healthy in the clusters it moves to, at most until 2026-11-27T08:10:00Z","producer":"TaintManager","clustersBeforeFailover":["m1","m2"],"creationTimestamp":"2026-11-27T08:00:00Z"}]}`,
		wantEvent: "Normal EvictWorkloadFromClusterSucceed Evict from cluster m1 succeed.",
	}, {
		name: "Directly, from the policy's failover.cluster: no task",
		objs: []any{rb(func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly}}
		}), cluster("m1", true, deadTaint(now)), cluster("m2", true)},
		purge:     policyv1alpha1.PurgeModeGracefully,
		wantPatch: `{"clusters":[{"name":"m2","replicas":2}],"gracefulEvictionTasks":null}`,
		wantEvent: "Normal EvictWorkloadFromClusterSucceed Evict from cluster m1 succeed.",
	}, {
		// Cluster failover with state preservation: a
		// Directly task carries the state to the clusters it moves to.
		name: "Directly with statePreservation: a task carrying the state",
		objs: []any{rb(func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly,
				StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: "example.io/ready", JSONPath: "{.readyReplicas}"}}}}}
			b.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: workv1alpha2.ResourceHealthy,
				Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":3}`)}}}
		}), cluster("m1", true, deadTaint(now)), cluster("m2", true)},
		wantPatch: `{"clusters":[{"name":"m2","replicas":2}],"gracefulEvictionTasks":[{"fromCluster":"m1","purgeMode":"Directly","replicas":3,"reason":"TaintUntolerated","message":"cluster m1 has the NoExecute taint dead:NoExecute, which the placement does not tolerate; its replicas in m1 were removed at once (purge mode Directly)","producer":"TaintManager",` +
			`"preservedLabelState":{"example.io/ready":"3"},"clustersBeforeFailover":["m1","m2"],"creationTimestamp":"2026-11-27T08:00:00Z"}]}`,
		wantEvent: "Normal EvictWorkloadFromClusterSucceed Evict from cluster m1 succeed.",
	}, {
		name: "statePreservation without the status: not evicted, a warning, retried",
		objs: []any{rb(func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeGracefully,
				StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: "example.io/ready", JSONPath: "{.readyReplicas}"}}}}}
		}), cluster("m1", true, deadTaint(now)), cluster("m2", true)},
		wantEvent: "Warning EvictWorkloadFromClusterFailed Evict from cluster m1 failed.",
		wantErr:   true,
	}, {
		name: "tolerated for 30s, added 10s ago: looked at again later",
		objs: []any{rb(func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Placement.ClusterTolerations = []corev1.Toleration{{Key: "dead", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)}}
		}), cluster("m1", true, deadTaint(now.Add(-10*time.Second))), cluster("m2", true)},
		wantRequeue: "[20s]",
	}, {
		name:        "two of three clusters not Ready: paused",
		objs:        []any{rb(), cluster("m1", false, deadTaint(now)), cluster("m2", false), cluster("m3", true)},
		wantEvent:   "Warning EvictionPaused 2 of 3 clusters are not Ready",
		wantRequeue: "[5s]",
		wantPaused:  "True ClustersNotReady",
	}, {
		name: "the pause over, nothing due any more: the condition says so",
		objs: []any{rb(func(b *workv1alpha2.ResourceBinding) {
			b.Status.Conditions = []metav1.Condition{{Type: workv1alpha2.EvictionPaused, Status: metav1.ConditionTrue, Reason: workv1alpha2.EvictionPausedReasonClustersNotReady}}
		}), cluster("m1", true), cluster("m2", true), cluster("m3", true)},
		wantPaused: "False EvictionResumed",
	}, {
		name:        "a partition seen 5s ago, the window 30s: held 25s more",
		objs:        []any{rb(), cluster("m1", true, deadTaint(now)), cluster("m2", true)},
		window:      30 * time.Second,
		quietSince:  5 * time.Second,
		wantRequeue: "[25s]",
	}, {
		name:      "one of three not Ready: evicted",
		objs:      []any{rb(), cluster("m1", false, deadTaint(now)), cluster("m2", true), cluster("m3", true)},
		purge:     policyv1alpha1.PurgeModeDirectly,
		wantPatch: `{"clusters":[{"name":"m2","replicas":2}],"gracefulEvictionTasks":null}`,
		wantEvent: "Normal EvictWorkloadFromClusterSucceed",
	}, {
		name:        "not Ready for 5s of a 30s window: held, looked at again when it ends",
		objs:        []any{rb(), notReadyFor(5 * time.Second), cluster("m2", true), cluster("m3", true)},
		window:      30 * time.Second,
		wantRequeue: "[25s]",
	}, {
		name:      "not Ready for 40s of a 30s window: evicted",
		objs:      []any{rb(), notReadyFor(40 * time.Second), cluster("m2", true), cluster("m3", true)},
		window:    30 * time.Second,
		purge:     policyv1alpha1.PurgeModeDirectly,
		wantPatch: `{"clusters":[{"name":"m2","replicas":2}],"gracefulEvictionTasks":null}`,
		wantEvent: "Normal EvictWorkloadFromClusterSucceed",
	}, {
		name:      "write refused: a warning event, retried",
		objs:      []any{rb(), cluster("m1", true, deadTaint(now)), cluster("m2", true)},
		purge:     policyv1alpha1.PurgeModeDirectly,
		writeErr:  apierrors.NewForbidden(schema.GroupResource{Resource: "resourcebindings"}, "nginx-deployment", nil),
		wantPatch: `{"clusters":[{"name":"m2","replicas":2}],"gracefulEvictionTasks":null}`,
		wantEvent: "Warning EvictWorkloadFromClusterFailed Evict from cluster m1 failed.",
		wantErr:   true,
	}, {
		name: "being deleted: nothing",
		objs: []any{rb(func(b *workv1alpha2.ResourceBinding) { b.DeletionTimestamp = &metav1.Time{Time: now} }), cluster("m1", true, deadTaint(now)), cluster("m2", true)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(tc.writeErr)
			bs, cl := listers(t, tc.objs...)
			c := &TaintManager{bindings: bs, clusters: cl, recorder: f.events, now: func() time.Time { return now },
				opts: TaintOptions{PurgeMode: tc.purge, UnhealthyClusterThreshold: 0.55, EvictionRate: 10, UnhealthyClusterWindow: tc.window,
					GracefulEvictionTimeout: 10 * time.Minute},
				write: f.write, writeStatus: f.writeStatus, requeue: f.requeue, limiter: newLimiter(10)}
			if tc.quietSince > 0 {
				c.partitioned(now.Add(-tc.quietSince))
			}
			err := c.reconcile(context.Background(), "rb/web/nginx-deployment")
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			checkPatch(t, f, tc.wantPatch, "7")
			checkEvent(t, f, tc.wantEvent)
			if got := f.pausedCondition(t); got != tc.wantPaused {
				t.Errorf("EvictionPaused condition written %q, want %q", got, tc.wantPaused)
			}
			want := tc.wantRequeue
			if want == "" {
				want = "[]"
			}
			if got := fmt.Sprint(f.requeued); got != want {
				t.Errorf("requeued after %s, want %s", got, tc.wantRequeue)
			}
		})
	}
}

// TestTaintManagerRateLimit: evictions past the rate's burst wait.
func TestTaintManagerRateLimit(t *testing.T) {
	f := newFixture(nil)
	bs, cl := listers(t, rb(), cluster("m1", true, deadTaint(now)), cluster("m2", true))
	c := &TaintManager{bindings: bs, clusters: cl, recorder: f.events, now: func() time.Time { return now },
		opts:  TaintOptions{PurgeMode: policyv1alpha1.PurgeModeDirectly, UnhealthyClusterThreshold: 0.55, EvictionRate: 2},
		write: f.write, requeue: f.requeue, limiter: newLimiter(2)}
	for range 3 {
		if err := c.reconcile(context.Background(), "rb/web/nginx-deployment"); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.patches) != 2 || fmt.Sprint(f.requeued) != "[500ms]" {
		t.Errorf("%d writes, requeued %v; want 2 writes (the burst) and the third after 500ms", len(f.patches), f.requeued)
	}
}
func checkPatch(t *testing.T, f *fixture, want, rv string) {
	t.Helper()
	if want == "" {
		if len(f.patches) != 0 {
			t.Errorf("wrote %v, want nothing", f.patches)
		}
		return
	}
	if len(f.patches) != 1 {
		t.Fatalf("%d patches, want 1", len(f.patches))
	}
	p := f.patches[0]
	if got := p["metadata"].(map[string]any)["resourceVersion"]; got != rv {
		t.Errorf("patch guarded by resourceVersion %v, want %s", got, rv)
	}
	spec, _ := json.Marshal(p["spec"])
	var a, b any
	_ = json.Unmarshal(spec, &a)
	_ = json.Unmarshal([]byte(want), &b)
	if aj, bj := mustJSON(a), mustJSON(b); aj != bj {
		t.Errorf("spec patch\n got %s\nwant %s", aj, bj)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func checkEvent(t *testing.T, f *fixture, want string) {
	t.Helper()
	var events []string
	for len(f.events.Events) > 0 {
		events = append(events, <-f.events.Events)
	}
	if want == "" {
		if len(events) != 0 {
			t.Errorf("events %v, want none", events)
		}
		return
	}
	// Eviction events are Karmada's: on the binding and on its template,
	// with the same reason and message.
	on := []string{""}
	if strings.Contains(want, "EvictWorkloadFromCluster") {
		on = []string{"involvedObject{kind=ResourceBinding,", "involvedObject{kind=Deployment,"}
	}
	for _, object := range on {
		found := false
		for _, e := range events {
			if strings.HasPrefix(e, want) && strings.Contains(e, object) {
				found = true
			}
		}
		if !found {
			t.Errorf("events %v, want one starting %q on %q", events, want, object)
		}
	}
}

func TestGracefulEvictionReconcile(t *testing.T) {
	created := metav1.NewTime(now.Add(-time.Minute))
	task := func(from string, mode policyv1alpha1.PurgeMode) workv1alpha2.GracefulEvictionTask {
		return workv1alpha2.GracefulEvictionTask{FromCluster: from, PurgeMode: mode, Reason: "TaintUntolerated", Producer: "TaintManager", CreationTimestamp: &created}
	}
	evicting := func(health workv1alpha2.ResourceHealth, tasks ...workv1alpha2.GracefulEvictionTask) *workv1alpha2.ResourceBinding {
		return rb(func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 5}}
			b.Spec.GracefulEvictionTasks = tasks
			b.Status.SchedulerObservedGeneration = b.Generation
			b.Status.Conditions = []metav1.Condition{{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue, ObservedGeneration: b.Generation}}
			b.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{
				{ClusterName: "m1", Applied: true, Health: workv1alpha2.ResourceHealthy},
				{ClusterName: "m2", Applied: true, Health: health},
			}
		})
	}
	for _, tc := range []struct {
		name        string
		binding     *workv1alpha2.ResourceBinding
		wantPatch   string
		wantEvent   string
		wantRequeue string
	}{{
		name:      "the replacement is healthy: the task ends",
		binding:   evicting(workv1alpha2.ResourceHealthy, task("m1", policyv1alpha1.PurgeModeGracefully)),
		wantPatch: `{"gracefulEvictionTasks":null}`,
		wantEvent: "Normal GracefulEvictionCompleted Removed the workload from cluster m1: the workload is healthy in m2.",
	}, {
		name:        "not yet healthy: looked at again when the timeout ends",
		binding:     evicting(workv1alpha2.ResourceUnhealthy, task("m1", policyv1alpha1.PurgeModeGracefully)),
		wantRequeue: "[9m0s]",
	}, {
		name:      "of two tasks, the Never one stays",
		binding:   evicting(workv1alpha2.ResourceHealthy, task("m1", policyv1alpha1.PurgeModeNever), task("m3", policyv1alpha1.PurgeModeDirectly)),
		wantPatch: `{"gracefulEvictionTasks":[{"fromCluster":"m1","purgeMode":"Never","reason":"TaintUntolerated","producer":"TaintManager","creationTimestamp":"2026-11-27T07:59:00Z"}]}`,
		wantEvent: "Normal GracefulEvictionCompleted Ended the eviction from cluster m3 (its workload went when it was evicted): the workload is healthy in m2.",
	}, {
		name:    "no tasks: nothing",
		binding: rb(),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(nil)
			bs, _ := listers(t, tc.binding)
			c := &GracefulEviction{bindings: bs, timeout: DefaultGracefulEvictionTimeout, recorder: f.events, now: func() time.Time { return now },
				write: f.write, requeue: f.requeue}
			if err := c.reconcile(context.Background(), "rb/web/nginx-deployment"); err != nil {
				t.Fatal(err)
			}
			checkPatch(t, f, tc.wantPatch, "7")
			checkEvent(t, f, tc.wantEvent)
			want := tc.wantRequeue
			if want == "" {
				want = "[]"
			}
			if got := fmt.Sprint(f.requeued); got != want {
				t.Errorf("requeued after %s, want %s", got, want)
			}
		})
	}
}
