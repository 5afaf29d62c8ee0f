// Package autoscaling benchmarks autoscaling: PodMetrics lists through the
// control plane against one member's metrics-server, and how fast a
// FederatedHPA reacts to a change of CPU use against its floor (the
// metrics-server resolution plus the FederatedHPA sync period). It runs
// with `make bench`, in its own environment.
package autoscaling

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

var members = []string{"member1", "member2", "member3"}

const (
	resolution = env.MinMetricsResolution
	syncPeriod = 5 * time.Second
)

func TestMain(m *testing.M) {
	if os.Getenv("FLOTILLA_BENCH") == "" {
		fmt.Println("bench/autoscaling: skipped; set FLOTILLA_BENCH=1 (make bench) to run the benchmarks")
		os.Exit(0)
	}
	nodes := env.NodeOptions{Count: 2, Pods: "500"}
	// member1 also holds the equal-work baseline: 1,000 more pods.
	framework.Main(m, "bench-autoscaling", env.Options{
		Members:           []env.MemberOptions{{Name: "member1", Nodes: env.NodeOptions{Count: 2, Pods: "1000"}}, {Name: "member2", Nodes: nodes}, {Name: "member3", Nodes: nodes}},
		MetricsResolution: resolution,
		Flotilla:          &env.FlotillaOptions{Args: []string{"--horizontal-pod-autoscaler-sync-period=" + syncPeriod.String()}},
	}, members...)
}

func record(t *testing.T, text string) { t.Helper(); framework.RecordBench(t, "autoscaling.txt", text) }

func percentile(d []time.Duration, p float64) time.Duration { return framework.Percentile(d, p) }

func memberClient(t *testing.T, name string) kubernetes.Interface {
	t.Helper()
	cs, err := framework.Member(t, name).Client()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestPodMetricsList: 1,000 pods over three members; the PodMetrics list
// of their selector through the control plane against the same list (a
// list of 1,000 pods) from one member's metrics-server directly: member1
// also runs 1,000 pods labelled app=bench-one in its own namespace.
func TestPodMetricsList(t *testing.T) {
	const ns, oneNS, total = "bench-metrics", "bench-metrics-one", 1000
	for i, m := range members {
		n := total / len(members)
		if i == 0 {
			n += total % len(members)
		}
		createDeployment(t, memberClient(t, m), ns, "bench", int32(n), "5m")
	}
	createDeployment(t, memberClient(t, "member1"), oneNS, "bench-one", total, "5m")
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	cp := metricsclient.NewForConfigOrDie(cfg)
	dcfg, err := framework.Member(t, "member1").MetricsServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	dcfg.QPS, dcfg.Burst = 1000, 1000
	direct := metricsclient.NewForConfigOrDie(dcfg)
	opts := metav1.ListOptions{LabelSelector: "app=bench"}
	framework.Eventually(t, 5*time.Minute, func(ctx context.Context) string {
		l, err := cp.MetricsV1beta1().PodMetricses(ns).List(ctx, opts)
		if err != nil {
			return err.Error()
		}
		if len(l.Items) != total {
			return fmt.Sprintf("%d pod metrics through the control plane, want %d", len(l.Items), total)
		}
		return ""
	})
	oneOpts := metav1.ListOptions{LabelSelector: "app=bench-one"}
	framework.Eventually(t, 5*time.Minute, func(ctx context.Context) string {
		l, err := direct.MetricsV1beta1().PodMetricses(oneNS).List(ctx, oneOpts)
		if err != nil {
			return err.Error()
		}
		if len(l.Items) != total {
			return fmt.Sprintf("%d pod metrics from member1's metrics-server, want %d", len(l.Items), total)
		}
		return ""
	})
	measure := func(list func(ctx context.Context) (int, error)) ([]time.Duration, int) {
		var d []time.Duration
		n := 0
		for range 100 {
			start := time.Now()
			got, err := list(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			d = append(d, time.Since(start))
			n = got
		}
		return d, n
	}
	// Where the time goes: the same request to flotilla-apiserver
	// directly (no host aggregator) and member1's list through its own
	// kube-apiserver (the hop every member answer takes).
	fcfg := framework.FlotillaConfig(t)
	fcfg.QPS, fcfg.Burst = cfg.QPS, cfg.Burst
	flotilla := metricsclient.NewForConfigOrDie(fcfg)
	mcfg, err := framework.Member(t, "member1").RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	mcfg.QPS, mcfg.Burst = 1000, 1000
	viaMember := metricsclient.NewForConfigOrDie(mcfg)
	// The same request without gzip: a response over 128 KB is compressed
	// when the client accepts it (client-go does by default); the
	// baseline's 334 items stay below that.
	ncfg := rest.CopyConfig(cfg)
	ncfg.DisableCompression = true
	plain := metricsclient.NewForConfigOrDie(ncfg)
	sources := []struct {
		name      string
		client    metricsclient.Interface
		ns, label string
	}{
		{"control plane", cp, ns, "app=bench"},
		{"member1 metrics-server, 1,000 pods", direct, oneNS, "app=bench-one"},
		{"member1 metrics-server, its share", direct, ns, "app=bench"},
		{"flotilla-apiserver directly", flotilla, ns, "app=bench"},
		{"member1 kube-apiserver, share", viaMember, ns, "app=bench"},
		{"control plane, without gzip", plain, ns, "app=bench"},
	}
	// FLOTILLA_BENCH_PROFILE=<dir> writes a 10 s CPU profile of
	// flotilla-apiserver taken while the rounds run.
	if dir := os.Getenv("FLOTILLA_BENCH_PROFILE"); dir != "" {
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			raw, err := flotilla.MetricsV1beta1().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", "10").DoRaw(context.Background())
			if err != nil {
				t.Errorf("profile: %v", err)
				return
			}
			if err := os.WriteFile(dir+"/flotilla-apiserver.pprof", raw, 0o644); err != nil {
				t.Error(err)
			}
		}()
	}
	// How long the members take to answer their parts, from
	// flotilla-apiserver's histogram, over the rounds.
	memberSums := func() framework.Samples {
		ss, err := framework.FlotillaMetrics(t.Context(), t)
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	before := memberSums()
	// Interleaved rounds, so every source sees the same machine.
	lat := make([][]time.Duration, len(sources))
	items := make([]int, len(sources))
	for range 2 {
		for i, src := range sources {
			d, n := measure(func(ctx context.Context) (int, error) {
				l, err := src.client.MetricsV1beta1().PodMetricses(src.ns).List(ctx, metav1.ListOptions{LabelSelector: src.label})
				if err != nil {
					return 0, err
				}
				return len(l.Items), nil
			})
			lat[i], items[i] = append(lat[i], d...), n
		}
	}
	p50, p99 := percentile(lat[0], 0.5), percentile(lat[0], 0.99)
	b50, b99 := percentile(lat[1], 0.5), percentile(lat[1], 0.99)
	s50, s99 := percentile(lat[2], 0.5), percentile(lat[2], 0.99)
	text := fmt.Sprintf("PodMetrics list app=bench (%s): ratio control plane / member1 metrics-server (1,000 pods) P50 %.2f P99 %.2f; / member1's share P50 %.2f P99 %.2f\n",
		time.Now().UTC().Format(time.RFC3339), float64(p50)/float64(b50), float64(p99)/float64(b99), float64(p50)/float64(s50), float64(p99)/float64(s99))
	for i, src := range sources {
		text += fmt.Sprintf("  %-32s %4d items  P50 %6s  P99 %6s\n", src.name, items[i],
			percentile(lat[i], 0.5).Round(100*time.Microsecond), percentile(lat[i], 0.99).Round(100*time.Microsecond))
	}
	after := memberSums()
	text += "  mean answer of each member during the rounds (flotilla_metrics_adapter_member_request_duration_seconds):"
	for _, m := range members {
		const name = "flotilla_metrics_adapter_member_request_duration_seconds"
		of := func(l map[string]string) bool { return l["cluster"] == m }
		sum, n := after.Sum(name+"_sum", of)-before.Sum(name+"_sum", of), after.Sum(name+"_count", of)-before.Sum(name+"_count", of)
		if n > 0 {
			text += fmt.Sprintf(" %s %s", m, time.Duration(sum/n*float64(time.Second)).Round(100*time.Microsecond))
		}
	}
	text += "\n"
	record(t, text)
	if p99 > time.Second {
		t.Errorf("P99 %s through the control plane, goal at most 1s", p99)
	}
	if items[1] != total {
		t.Errorf("baseline listed %d items, want %d", items[1], total)
	}
}

// TestReactionTime: from a change of the pods' CPU use (their kwok usage
// annotation) until the template's replicas change.
func TestReactionTime(t *testing.T) {
	ns := framework.Namespace(t, "bench-react")
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {kwok.x-k8s.io/usage-cpu: 5m}}
    spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: 25m}}}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
---
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: web, namespace: %[1]s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 12
  behavior: {scaleDown: {stabilizationWindowSeconds: 0}, scaleUp: {stabilizationWindowSeconds: 0}}
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
`, ns))
	host, err := framework.Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	replicas := func(ctx context.Context) int32 {
		d, err := host.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return -1
		}
		return *d.Spec.Replicas
	}
	// Every pod has CPU samples: the FederatedHPA reports a utilization.
	framework.Eventually(t, 3*time.Minute, func(ctx context.Context) string {
		f, err := karmadaFHPA(t, ctx, ns)
		if err != nil {
			return err.Error()
		}
		if len(f) == 0 {
			return "no current metrics yet"
		}
		return ""
	})
	time.Sleep(2 * resolution) // settle: every pod sampled at 5m
	var times []time.Duration
	for round := range 3 {
		before := replicas(t.Context())
		start := time.Now()
		annotatePods(t, ns, "web", "25m")
		framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
			if r := replicas(ctx); r == before {
				return fmt.Sprintf("round %d: replicas still %d", round, r)
			}
			return ""
		})
		times = append(times, time.Since(start))
		// Back to the start: low use, down to the minimum.
		annotatePods(t, ns, "web", "5m")
		framework.Eventually(t, 3*time.Minute, func(ctx context.Context) string {
			if r := replicas(ctx); r != 3 {
				return fmt.Sprintf("round %d: replicas %d, want 3 again", round, r)
			}
			return ""
		})
		time.Sleep(2 * resolution)
	}
	floor := resolution + syncPeriod
	med := percentile(times, 0.5)
	record(t, fmt.Sprintf("FederatedHPA reaction (%s): usage change to template replicas change %v, median %s; floor (metrics resolution %s + sync period %s) %s; median minus floor %s\n",
		time.Now().UTC().Format(time.RFC3339), roundAll(times), med.Round(100*time.Millisecond), resolution, syncPeriod, floor, (med-floor).Round(100*time.Millisecond)))
}

func roundAll(d []time.Duration) []time.Duration {
	out := make([]time.Duration, len(d))
	for i, v := range d {
		out[i] = v.Round(100 * time.Millisecond)
	}
	return out
}

// annotatePods sets the emulated CPU use of app's running pods in every
// member, in place (no rollout).
func annotatePods(t *testing.T, ns, app, cpu string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"kwok.x-k8s.io/usage-cpu":%q}}}`, cpu)
	for _, m := range members {
		cs := memberClient(t, m)
		pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if _, err := cs.CoreV1().Pods(ns).Patch(t.Context(), p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func createDeployment(t *testing.T, cs kubernetes.Interface, ns, name string, replicas int32, cpu string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !isExists(err) {
		t.Fatal(err)
	}
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"kwok.x-k8s.io/usage-cpu": cpu}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
