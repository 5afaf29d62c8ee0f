package ha

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// proxyPath is what the proxy tests ask member1 for through the control plane.
const proxyPath = "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/namespaces/default"

// Issue 23: clusters/member1/proxy answers 50 requests in a row while both
// replicas serve (and each replica answers some of them: the aggregator
// picks an endpoint at random), then 50 more after one replica was killed
// and its endpoint withdrawn, as the endpoints controller withdraws a dead
// pod's.
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
		cfg, err := e.Host.RESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		cfg = rest.CopyConfig(cfg)
		cfg.Host = e.ReplicaURL(i)
		cfg.CAData, cfg.CAFile, cfg.Insecure = nil, "", true
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

// TestPullProxyThroughEitherReplica is the place of the pull-mode half of
// the proxy test: a pull member's agent keeps one tunnel to one replica,
// so a request the aggregator sends to the other replica needs the tunnel
// relay between replicas, which is being built (issue 23).
func TestPullProxyThroughEitherReplica(t *testing.T) {
	requireHA(t)
	t.Skip("TODO(issue 23): needs the tunnel relay between replicas; not tested until it lands")
}
