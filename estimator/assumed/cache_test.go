package assumed

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/estimator"
)

// deployment is the spec of a single-template workload in ns of replicas
// replicas requesting cpu each, scheduled to clusters ("name:replicas").
func deployment(ns string, cpu string, clusters ...string) *workv1alpha2.ResourceBindingSpec {
	return &workv1alpha2.ResourceBindingSpec{
		Resource:            workv1alpha2.ObjectReference{Namespace: ns},
		ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		Clusters:            targets(clusters...),
	}
}

// flink is the spec of a workload of a job manager (1 CPU) and task
// managers (2 CPUs), scheduled to clusters ("name:jobmanager:taskmanager").
func flink(ns string, clusters ...string) *workv1alpha2.ResourceBindingSpec {
	comp := func(name, cpu string) workv1alpha2.Component {
		return workv1alpha2.Component{Name: name, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{
			ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
	}
	return &workv1alpha2.ResourceBindingSpec{
		Resource:   workv1alpha2.ObjectReference{Namespace: ns},
		Components: []workv1alpha2.Component{comp("jobmanager", "1"), comp("taskmanager", "2")},
		Clusters:   targets(clusters...),
	}
}

// targets parses "name:replicas" (single template) or
// "name:jobmanager:taskmanager" (flink's components).
func targets(clusters ...string) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for _, c := range clusters {
		f := strings.Split(c, ":")
		var n []int32
		for _, s := range f[1:] {
			var v int32
			_, _ = fmt.Sscan(s, &v)
			n = append(n, v)
		}
		tc := workv1alpha2.TargetCluster{Name: f[0]}
		if len(n) == 1 {
			tc.Replicas = n[0]
		} else {
			tc.Components = []workv1alpha2.TargetComponent{{Name: "jobmanager", Replicas: n[0]}, {Name: "taskmanager", Replicas: n[1]}}
		}
		out = append(out, tc)
	}
	return out
}

// collected is a binding status whose cluster reports status with health.
func collected(cluster string, health workv1alpha2.ResourceHealth, status string) []workv1alpha2.AggregatedStatusItem {
	item := workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Health: health, Applied: true}
	if status != "" {
		item.Status = &runtime.RawExtension{Raw: []byte(status)}
	}
	return []workv1alpha2.AggregatedStatusItem{item}
}

// show renders an estimator.Assumed: "nodes: <pods> pods cpu=<q> | quota
// <class>: ...", classes sorted, "" as "-".
func show(a estimator.Assumed) string {
	usage := func(u estimator.Usage) string {
		s := fmt.Sprintf("%d pods", u.Pods())
		r := u.Requests()
		for _, name := range slices.Sorted(maps.Keys(r)) {
			q := r[name]
			s += fmt.Sprintf(" %s=%s", name, q.String())
		}
		return s
	}
	var parts []string
	if a.Nodes.Pods() > 0 || len(a.Nodes.Requests()) > 0 {
		parts = append(parts, "nodes: "+usage(a.Nodes))
	}
	for _, class := range slices.Sorted(maps.Keys(a.Quota)) {
		name := class
		if name == "" {
			name = "-"
		}
		parts = append(parts, "quota "+name+": "+usage(a.Quota[class]))
	}
	return strings.Join(parts, " | ")
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestCache(t *testing.T) {
	t.Parallel()
	ttl := 5 * time.Minute
	// observe reads a binding as version with clusters and status.
	observe := func(c *Cache, key, version string, clusters []workv1alpha2.TargetCluster, status []workv1alpha2.AggregatedStatusItem) {
		c.Observe(key, func() (Observed, bool) { return Observed{Version: version, Clusters: clusters, Status: status}, true })
	}
	// want is For's answer for cluster/namespace/except.
	type want struct{ cluster, namespace, except, is string }
	tests := []struct {
		name  string
		steps func(c *Cache, clk *clock)
		want  []want
	}{{
		name: "a written result is assumed on its clusters",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "500m"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:3", "m2:1"))
		},
		want: []want{
			{"m1", "ns", "", "nodes: 3 pods cpu=1500m | quota -: 3 pods cpu=1500m"},
			{"m2", "ns", "", "nodes: 1 pods cpu=500m | quota -: 1 pods cpu=500m"},
			// Other namespaces' quotas do not count them; every estimate
			// counts them on the nodes.
			{"m1", "other", "", "nodes: 3 pods cpu=1500m"},
			{"m3", "ns", "", ""},
		},
	}, {
		name: "several workloads on one cluster add up",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "500m"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:3"))
			c.Assume("ns/b", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))
			c.Assume("other/c", "1", deployment("other", "2"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1"))
		},
		want: []want{
			{"m1", "ns", "", "nodes: 6 pods cpu=5500m | quota -: 5 pods cpu=3500m"},
			{"m1", "other", "", "nodes: 6 pods cpu=5500m | quota -: 1 pods cpu=2"},
			// A binding's estimate leaves its own assumption out.
			{"m1", "ns", "ns/b", "nodes: 4 pods cpu=3500m | quota -: 3 pods cpu=1500m"},
			{"m1", "other", "ns/b", "nodes: 4 pods cpu=3500m | quota -: 1 pods cpu=2"},
		},
	}, {
		name: "a scale-up adds only the difference",
		steps: func(c *Cache, _ *clock) {
			// Scheduled before the bookkeeping knew it (a new leader).
			c.Assume("ns/a", "7", deployment("ns", "1", "m1:2"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:5", "m2:1"))
		},
		want: []want{{"m1", "ns", "", "nodes: 3 pods cpu=3 | quota -: 3 pods cpu=3"}, {"m2", "ns", "", "nodes: 1 pods cpu=1 | quota -: 1 pods cpu=1"}},
	}, {
		name: "scale-ups before the pods appear accumulate",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))
			c.Assume("ns/a", "2", deployment("ns", "1", "m1:2"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:5"))
		},
		want: []want{{"m1", "ns", "", "nodes: 5 pods cpu=5 | quota -: 5 pods cpu=5"}},
	}, {
		name: "a result without the cluster withdraws the assumption",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2", "m2:2"))
			c.Assume("ns/a", "2", deployment("ns", "1", "m1:2", "m2:2"), &workv1alpha2.ResourceBindingStatus{}, targets("m2:4"))
		},
		want: []want{{"m1", "ns", "", ""}, {"m2", "ns", "", "nodes: 4 pods cpu=4 | quota -: 4 pods cpu=4"}},
	}, {
		name: "a smaller result releases the replicas it drops, assumed ones first",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1", "m1:2"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:5"))
			c.Assume("ns/a", "2", deployment("ns", "1", "m1:5"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:4"))
		},
		want: []want{{"m1", "ns", "", "nodes: 2 pods cpu=2 | quota -: 2 pods cpu=2"}},
	}, {
		name: "no replicas (a non-workload) assume nothing",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/cm", "1", &workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{Namespace: "ns"}},
				&workv1alpha2.ResourceBindingStatus{}, targets("m1:0", "m2:0"))
		},
		want: []want{{"m1", "ns", "", ""}},
	}, {
		name: "components: replicas times each component's request",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/f", "1", flink("ns"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1:2"))
			c.Assume("ns/g", "1", flink("ns"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1:3"))
		},
		want: []want{
			{"m1", "ns", "", "nodes: 7 pods cpu=12 | quota -: 7 pods cpu=12"},
			{"m1", "ns", "ns/g", "nodes: 3 pods cpu=5 | quota -: 3 pods cpu=5"},
		},
	}, {
		name: "components: a scale-up of one component adds its difference",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/f", "1", flink("ns", "m1:1:2"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1:4"))
		},
		want: []want{{"m1", "ns", "", "nodes: 2 pods cpu=4 | quota -: 2 pods cpu=4"}},
	}, {
		name: "priority classes are kept apart for the quotas",
		steps: func(c *Cache, _ *clock) {
			high := deployment("ns", "1")
			high.ReplicaRequirements.PriorityClassName = "high"
			c.Assume("ns/a", "1", high, &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))
			c.Assume("ns/b", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1"))
		},
		want: []want{{"m1", "ns", "", "nodes: 3 pods cpu=3 | quota -: 1 pods cpu=1 | quota high: 2 pods cpu=2"}},
	}, {
		name: "released by a Healthy collected status",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2", "m2:2"))
			observe(c, "ns/a", "2", targets("m1:2", "m2:2"), collected("m1", workv1alpha2.ResourceHealthy, `{"replicas":1}`))
		},
		want: []want{{"m1", "ns", "", ""}, {"m2", "ns", "", "nodes: 2 pods cpu=2 | quota -: 2 pods cpu=2"}},
	}, {
		name: "released by a collected status reporting the replicas",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2", "m2:2"))
			observe(c, "ns/a", "2", targets("m1:2", "m2:2"), append(collected("m1", workv1alpha2.ResourceUnhealthy, `{"replicas":2,"readyReplicas":0}`),
				collected("m2", workv1alpha2.ResourceUnhealthy, `{"replicas":1}`)...))
		},
		want: []want{{"m1", "ns", "", ""}, {"m2", "ns", "", "nodes: 2 pods cpu=2 | quota -: 2 pods cpu=2"}},
	}, {
		name: "not released by the status collected before the write",
		steps: func(c *Cache, _ *clock) {
			before := collected("m1", workv1alpha2.ResourceHealthy, `{"replicas":2}`)
			c.Assume("ns/a", "1", deployment("ns", "1", "m1:2"), &workv1alpha2.ResourceBindingStatus{AggregatedStatus: before}, targets("m1:5"))
			observe(c, "ns/a", "2", targets("m1:5"), before)
		},
		want: []want{{"m1", "ns", "", "nodes: 3 pods cpu=3 | quota -: 3 pods cpu=3"}},
	}, {
		name: "released once the status collected after the write shows the pods",
		steps: func(c *Cache, _ *clock) {
			before := collected("m1", workv1alpha2.ResourceHealthy, `{"replicas":2}`)
			c.Assume("ns/a", "1", deployment("ns", "1", "m1:2"), &workv1alpha2.ResourceBindingStatus{AggregatedStatus: before}, targets("m1:5"))
			observe(c, "ns/a", "2", targets("m1:5"), collected("m1", workv1alpha2.ResourceUnhealthy, `{"replicas":4}`))
			observe(c, "ns/a", "3", targets("m1:5"), collected("m1", workv1alpha2.ResourceUnhealthy, `{"replicas":5}`))
		},
		want: []want{{"m1", "ns", "", ""}},
	}, {
		// A custom kind without health interpretation whose pods never
		// appear: applied, health Unknown, no replicas in its status.
		name: "components are not released by a status without health",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/f", "1", flink("ns"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1:2"))
			observe(c, "ns/f", "2", targets("m1:1:2"), collected("m1", workv1alpha2.ResourceUnknown, `{"replicas":3}`))
		},
		want: []want{{"m1", "ns", "", "nodes: 3 pods cpu=5 | quota -: 3 pods cpu=5"}},
	}, {
		name: "components are released by a Healthy status",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/f", "1", flink("ns"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1:2"))
			observe(c, "ns/f", "2", targets("m1:1:2"), collected("m1", workv1alpha2.ResourceHealthy, ""))
		},
		want: []want{{"m1", "ns", "", ""}},
	}, {
		name: "a kind without a health interpretation is not released by its Healthy",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/f", "1", flink("ns"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1:2"))
			c.Observe("ns/f", func() (Observed, bool) {
				return Observed{Version: "2", Clusters: targets("m1:1:2"), Status: collected("m1", workv1alpha2.ResourceHealthy, ""), HealthUninterpreted: true}, true
			})
		},
		want: []want{{"m1", "ns", "", "nodes: 3 pods cpu=5 | quota -: 3 pods cpu=5"}},
	}, {
		name: "withdrawn by someone else: the cluster left spec.clusters",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2", "m2:2"))
			observe(c, "ns/a", "2", targets("m2:2"), nil)
		},
		want: []want{{"m1", "ns", "", ""}, {"m2", "ns", "", "nodes: 2 pods cpu=2 | quota -: 2 pods cpu=2"}},
	}, {
		name: "reduced by someone else",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1", "m1:2"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:6"))
			observe(c, "ns/a", "2", targets("m1:3"), nil)
		},
		want: []want{{"m1", "ns", "", "nodes: 1 pods cpu=1 | quota -: 1 pods cpu=1"}},
	}, {
		name: "a read of the version the write replaced changes nothing",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))
			observe(c, "ns/a", "1", nil, nil)
		},
		want: []want{{"m1", "ns", "", "nodes: 2 pods cpu=2 | quota -: 2 pods cpu=2"}},
	}, {
		name: "a binding gone releases everything",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))
			c.Assume("ns/b", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1"))
			c.Forget("ns/a")
			c.Observe("ns/b", func() (Observed, bool) { return Observed{}, false })
		},
		want: []want{{"m1", "ns", "", ""}},
	}, {
		name: "undo takes back a result whose write failed",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2", "m3:1"))
			undo := c.Assume("ns/a", "2", deployment("ns", "1", "m1:2", "m3:1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:5", "m2:1"))
			undo()
			undo()
		},
		want: []want{
			{"m1", "ns", "", "nodes: 2 pods cpu=2 | quota -: 2 pods cpu=2"},
			{"m2", "ns", "", ""},
			{"m3", "ns", "", "nodes: 1 pods cpu=1 | quota -: 1 pods cpu=1"},
		},
	}, {
		name: "undo of a first result leaves nothing",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))()
		},
		want: []want{{"m1", "ns", "", ""}},
	}, {
		name: "undo after the binding changed leaves it",
		steps: func(c *Cache, _ *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))
			undo := c.Assume("ns/a", "2", deployment("ns", "1", "m1:2"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2", "m2:3"))
			observe(c, "ns/a", "3", targets("m2:3"), nil)
			undo()
			undo2 := c.Assume("ns/b", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m3:1"))
			c.Forget("ns/b")
			undo2()
		},
		want: []want{{"m1", "ns", "", ""}, {"m2", "ns", "", "nodes: 3 pods cpu=3 | quota -: 3 pods cpu=3"}, {"m3", "ns", "", ""}},
	}, {
		name: "expired after the ttl",
		steps: func(c *Cache, clk *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))
			clk.add(ttl / 2)
			c.Assume("ns/b", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1"))
			clk.add(ttl / 2)
		},
		want: []want{{"m1", "ns", "", "nodes: 1 pods cpu=1 | quota -: 1 pods cpu=1"}},
	}, {
		name: "adding replicas restarts the ttl",
		steps: func(c *Cache, clk *clock) {
			c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))
			clk.add(ttl - time.Second)
			c.Assume("ns/a", "2", deployment("ns", "1", "m1:2"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:3"))
			clk.add(ttl - time.Second)
		},
		want: []want{{"m1", "ns", "", "nodes: 3 pods cpu=3 | quota -: 3 pods cpu=3"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := &clock{t: time.Unix(1000, 0)}
			c := New(ttl, clk.now)
			tc.steps(c, clk)
			for _, w := range tc.want {
				if got := show(c.For(w.cluster, w.namespace, w.except)); got != w.is {
					t.Errorf("For(%q, %q, %q) = %q, want %q", w.cluster, w.namespace, w.except, got, w.is)
				}
			}
		})
	}
}

// TestCacheEmptiesOut checks that what is released leaves nothing behind:
// the sums are kept with every change, and must come back to nothing.
func TestCacheEmptiesOut(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Unix(1000, 0)}
	c := New(time.Minute, clk.now)
	c.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2", "m2:2"))
	c.Assume("ns/f", "1", flink("ns"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:1:2"))
	c.Assume("ns/a", "2", deployment("ns", "1", "m1:2", "m2:2"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:4"))
	if got := c.Len(); got != 2 {
		t.Errorf("Len() = %d, want 2", got)
	}
	c.Forget("ns/a")
	clk.add(time.Minute)
	if got := show(c.For("m1", "ns", "")); got != "" {
		t.Errorf("For() after everything went = %q", got)
	}
	if c.Len() != 0 || len(c.bindings) != 0 || len(c.clusters) != 0 || !c.next.IsZero() {
		t.Errorf("left behind: %d entries, bindings %v, clusters %v, next %v", c.Len(), c.bindings, c.clusters, c.next)
	}
	var none *Cache
	none.Assume("ns/a", "1", deployment("ns", "1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))
	if got := none.For("m1", "ns", ""); !got.IsZero() {
		t.Errorf("a nil Cache assumed %q", show(got))
	}
}

// TestCacheConcurrent runs the scheduler's calls side by side (go test
// -race tells).
func TestCacheConcurrent(t *testing.T) {
	t.Parallel()
	c := New(time.Minute, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			key := fmt.Sprintf("ns/w%d", i)
			for j := range 50 {
				c.Assume(key, fmt.Sprint(j), deployment("ns", "1", "m1:1"), &workv1alpha2.ResourceBindingStatus{}, targets("m1:2"))
				c.Observe(key, func() (Observed, bool) { return Observed{Version: "x", Clusters: targets("m1:2")}, true })
				_ = c.For("m1", "ns", key)
			}
			c.Forget(key)
		})
	}
	wg.Wait()
	if got := show(c.For("m1", "ns", "")); got != "" {
		t.Errorf("For() after every binding went = %q", got)
	}
}
