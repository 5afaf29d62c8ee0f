// Package pull benchmarks Pull mode: template → member latency
// for a pull member against a push member, clusters/{name}/proxy through
// the agent's tunnel against the push proxy, and the agent's memory. It
// runs with `make bench`, in its own environment: member1 push, member3
// pull with its agent.
package pull

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

var agent *env.Process

func TestMain(m *testing.M) {
	if os.Getenv("FLOTILLA_BENCH") == "" {
		fmt.Println("bench/pull: skipped; set FLOTILLA_BENCH=1 (make bench) to run the benchmarks")
		os.Exit(0)
	}
	framework.Main(m, "bench-pull", env.Options{
		Members:  []env.MemberOptions{{Name: "member1"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{},
	}, "member1")
}

func record(t *testing.T, text string) { t.Helper(); framework.RecordBench(t, "pull.txt", text) }

// startAgent starts member3's agent once, and waits for member3 Ready.
var agentOnce sync.Once

func startAgent(t *testing.T) *env.Process {
	t.Helper()
	agentOnce.Do(func() {
		kubeconfig, err := framework.Env.Register(context.Background(), "member3")
		if err != nil {
			t.Fatal(err)
		}
		p, err := framework.Env.StartAgent(context.Background(), "member3", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		agent = p
	})
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		out, err := framework.Kubectl(t, "get", "cluster", "member3", "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}")
		if err != nil || strings.TrimSpace(out) != "True" {
			return fmt.Sprintf("member3 not Ready: %s %v", out, err)
		}
		return ""
	})
	return agent
}

// TestPullLatency: ConfigMaps created on the control plane at a steady
// rate, alternately for member1 (push) and member3 (pull); from each
// template's creation until the member has it.
func TestPullLatency(t *testing.T) {
	startAgent(t)
	const ns, n, rate = "bench-pull", 200, 10 // per second
	framework.Namespace(t, ns)
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: push, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {to: member1}}}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: pull, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {to: member3}}}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`, ns))
	var mu sync.Mutex
	created := map[string]time.Time{}
	arrived := map[string]time.Duration{}
	done := make(chan struct{}, 2*n)
	for _, m := range []string{"member1", "member3"} {
		// The namespace reaches the members on its own; watch once it is there.
		framework.Eventually(t, time.Minute, func(ctx context.Context) string {
			_, err := framework.MemberClient(t, m).CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			return ""
		})
		w, err := framework.MemberClient(t, m).CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok || ev.Type != watch.Added || !strings.HasPrefix(cm.Name, "c-") {
					continue
				}
				mu.Lock()
				if at, ok := created[cm.Name]; ok {
					arrived[cm.Name] = time.Since(at)
				}
				mu.Unlock()
				done <- struct{}{}
			}
		}()
	}
	hc := framework.HostClient(t)
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	for i := range n {
		<-tick.C
		to := []string{"member1", "member3"}[i%2]
		name := "c-" + strconv.Itoa(i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"to": to}}, Data: map[string]string{"i": name}}
		mu.Lock()
		created[name] = time.Now()
		mu.Unlock()
		if _, err := hc.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(2 * time.Minute)
	for range n {
		select {
		case <-done:
		case <-deadline:
			t.Fatalf("only %d of %d ConfigMaps arrived", len(arrived), n)
		}
	}
	var push, pull []time.Duration
	mu.Lock()
	for name, d := range arrived {
		i, _ := strconv.Atoi(strings.TrimPrefix(name, "c-"))
		if i%2 == 0 {
			push = append(push, d)
		} else {
			pull = append(pull, d)
		}
	}
	mu.Unlock()
	p := framework.Percentile
	record(t, fmt.Sprintf(`pull: template → member latency, %d ConfigMaps at %d/s, alternately push (member1) and pull (member3) (%s)
  push  P50 %6s  P99 %6s
  pull  P50 %6s  P99 %6s   ratio pull/push P50 %.2f P99 %.2f
`, n, rate, time.Now().UTC().Format(time.RFC3339), p(push, 0.5).Round(time.Millisecond), p(push, 0.99).Round(time.Millisecond),
		p(pull, 0.5).Round(time.Millisecond), p(pull, 0.99).Round(time.Millisecond),
		float64(p(pull, 0.5))/float64(p(push, 0.5)), float64(p(pull, 0.99))/float64(p(push, 0.99))))
}

// TestProxyThroughTunnel: GET of one ConfigMap through
// clusters/member3/proxy (the agent's tunnel) against the same GET through
// clusters/member1/proxy (push), as the admin, in interleaved rounds.
func TestProxyThroughTunnel(t *testing.T) {
	startAgent(t)
	for _, m := range []string{"member1", "member3"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"}, Data: map[string]string{"k": "v"}}
		if _, err := framework.MemberClient(t, m).CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	rc := kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient()
	get := func(ctx context.Context, member string) error {
		_, err := rc.Get().AbsPath("/apis/cluster.karmada.io/v1alpha1/clusters/" + member + "/proxy/api/v1/namespaces/default/configmaps/probe").DoRaw(ctx)
		return err
	}
	// Warm both paths (unified auth, connections).
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		for _, m := range []string{"member1", "member3"} {
			if err := get(ctx, m); err != nil {
				return m + ": " + err.Error()
			}
		}
		return ""
	})
	lat := map[string][]time.Duration{}
	for range 4 {
		for _, m := range []string{"member1", "member3"} {
			for range 100 {
				start := time.Now()
				if err := get(t.Context(), m); err != nil {
					t.Fatal(err)
				}
				lat[m] = append(lat[m], time.Since(start))
			}
		}
	}
	p := framework.Percentile
	push, pull := lat["member1"], lat["member3"]
	r50, r99 := float64(p(pull, 0.5))/float64(p(push, 0.5)), float64(p(pull, 0.99))/float64(p(push, 0.99))
	record(t, fmt.Sprintf(`pull: clusters/{name}/proxy GET of a ConfigMap, 400 each, interleaved (%s)
  push (member1)            P50 %6s  P99 %6s
  pull (member3, tunnel)    P50 %6s  P99 %6s   ratio P50 %.2f P99 %.2f (goal <= 1.2)
`, time.Now().UTC().Format(time.RFC3339), p(push, 0.5).Round(100*time.Microsecond), p(push, 0.99).Round(100*time.Microsecond),
		p(pull, 0.5).Round(100*time.Microsecond), p(pull, 0.99).Round(100*time.Microsecond), r50, r99))
}

// TestAgentRSS: the agent's resident memory after the other benchmarks.
func TestAgentRSS(t *testing.T) {
	p := startAgent(t)
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmRSS:") || strings.HasPrefix(line, "VmHWM:") {
			record(t, fmt.Sprintf("pull: flotilla-agent %s\n", strings.Join(strings.Fields(line), " ")))
		}
	}
}
