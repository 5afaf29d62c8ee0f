package ha

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
	"github.com/flotilla-io/flotilla/tunnel"
)

// proxyPath is what the proxy tests ask member1 for through the control plane.
const proxyPath = "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/namespaces/default"

// TestProxyThroughBothReplicas: clusters/member1/proxy answers 50 requests
// in a row while both replicas serve (and each replica answers some of
// them: the aggregator picks an endpoint at random), then 50 more after one
// replica was killed and its endpoint withdrawn, as the endpoints
// controller withdraws a dead pod's.
func TestProxyThroughBothReplicas(t *testing.T) {
	requireHA(t)
	restoreReplicas(t)
	e := framework.Env
	host := framework.HostClient(t)
	ask50 := func(when string) {
		t.Helper()
		for i := range 50 {
			if _, err := host.Discovery().RESTClient().Get().AbsPath(proxyPath).DoRaw(t.Context()); err != nil {
				t.Fatalf("%s: request %d of 50: %v", when, i+1, err)
			}
		}
	}
	before := proxyRequests(t)
	ask50("both replicas up")
	after := proxyRequests(t)
	for i := range before {
		if after[i] <= before[i] {
			t.Errorf("replica %d answered none of the 50 proxy requests (%v requests before, %v after)", i, before[i], after[i])
		}
	}

	victim := (leader(t, time.Minute) + 1) % e.Replicas()
	if err := e.KillReplica(victim); err != nil {
		t.Fatal(err)
	}
	// The endpoints controller's part: the dead replica's endpoint goes.
	if err := e.SyncFlotillaEndpoints(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The aggregator's EndpointSlice informer learns of the deletion by a
	// watch event, well within this.
	time.Sleep(2 * time.Second)
	ask50(fmt.Sprintf("replica %d killed", victim))
}

// proxyRequests returns, per replica, how many clusters/proxy requests it
// has served (its own apiserver_request_total, read past the aggregator).
func proxyRequests(t *testing.T) []float64 {
	t.Helper()
	e := framework.Env
	out := make([]float64, e.Replicas())
	for i := range out {
		cfg, err := e.ReplicaConfig(i)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		cancel()
		if err != nil {
			t.Fatalf("metrics of replica %d: %v", i, err)
		}
		samples, err := framework.ParseMetrics(raw)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = samples.Sum("apiserver_request_total", func(l map[string]string) bool {
			return l["resource"] == "clusters" && l["subresource"] == "proxy"
		})
	}
	return out
}

// pullMu guards pullAgent: member3's registration and agent, made once by
// the first test that needs them.
var (
	pullMu    sync.Mutex
	pullAgent *env.Process
)

// pullMember registers member3 in Pull mode and starts its agent (once),
// and waits until member3 is Ready.
func pullMember(t *testing.T) {
	t.Helper()
	e := framework.Env
	pullMu.Lock()
	defer pullMu.Unlock()
	if pullAgent == nil {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		kubeconfig, err := e.Register(ctx, "member3")
		if err != nil {
			t.Fatal(err)
		}
		if pullAgent, err = e.StartAgent(ctx, "member3", kubeconfig); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := framework.CommandContext(t)
	defer cancel()
	if err := e.WaitClustersReady(ctx, []string{"member3"}, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// tunnelHolder waits until the host Lease names a running replica as the
// holder of member3's tunnel and returns it.
func tunnelHolder(t *testing.T, not int, timeout time.Duration) int {
	t.Helper()
	e := framework.Env
	host := framework.HostClient(t)
	holder := -1
	err := poll(t.Context(), timeout, func(ctx context.Context) string {
		l, err := host.CoordinationV1().Leases(names.SystemNamespace).Get(ctx, tunnel.LeasePrefix+"member3", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		h := ptr.Deref(l.Spec.HolderIdentity, "")
		for i := range e.Replicas() {
			if "https://"+h == e.ReplicaURL(i) && i != not {
				holder = i
				return ""
			}
		}
		return fmt.Sprintf("the tunnel's holder is %q", h)
	})
	if err != nil {
		t.Fatalf("member3's tunnel Lease: %v", err)
	}
	return holder
}

// TestPullProxyThroughEitherReplica: a Pull member's agent keeps one
// tunnel, to one replica; the aggregator sends clusters/member3/proxy to
// either, and the other relays through the holder. 50 requests in a row are
// answered with both replicas up, and both answer some; then the tunnel's
// replica is killed, the agent reconnects to the other, and 50 more are
// answered.
func TestPullProxyThroughEitherReplica(t *testing.T) {
	requireHA(t)
	restoreReplicas(t)
	pullMember(t)
	e := framework.Env
	host := framework.HostClient(t)
	const path = "/apis/cluster.karmada.io/v1alpha1/clusters/member3/proxy/api/v1/namespaces/default"
	ask50 := func(when string) {
		t.Helper()
		for i := range 50 {
			if _, err := host.Discovery().RESTClient().Get().AbsPath(path).DoRaw(t.Context()); err != nil {
				t.Fatalf("%s: request %d of 50 to member3: %v", when, i+1, err)
			}
		}
	}
	holder := tunnelHolder(t, -1, time.Minute)
	before := proxyRequests(t)
	ask50(fmt.Sprintf("tunnel on replica %d, both replicas up", holder))
	after := proxyRequests(t)
	for i := range before {
		if after[i] <= before[i] {
			t.Errorf("replica %d answered none of the 50 requests (%v before, %v after)", i, before[i], after[i])
		}
	}

	killed := time.Now()
	if err := e.KillReplica(holder); err != nil {
		t.Fatal(err)
	}
	if err := e.SyncFlotillaEndpoints(t.Context()); err != nil {
		t.Fatal(err)
	}
	next := tunnelHolder(t, holder, time.Minute)
	t.Logf("the agent's tunnel moved from replica %d to replica %d %.1f s after the kill", holder, next, time.Since(killed).Seconds())
	ask50(fmt.Sprintf("replica %d, the tunnel's, killed", holder))
}
