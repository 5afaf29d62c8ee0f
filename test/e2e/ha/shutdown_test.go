package ha

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// stopGrace is the grace a Deployment's pod gets by default: SIGKILL
// follows SIGTERM after 30 seconds.
const stopGrace = 30 * time.Second

// TestLeaderStoppedBySIGTERM: the replica holding the controllers' lease,
// stopped with SIGTERM as a rolling update stops a pod, ends by itself well
// within a pod's grace (its workers stop, the watches it serves are ended
// instead of running to the request timeout), and hands the lease back, so
// the other replica leads at its next retry instead of after the lease
// runs out.
func TestLeaderStoppedBySIGTERM(t *testing.T) {
	requireHA(t)
	restoreReplicas(t)
	e := framework.Env
	first := leader(t, time.Minute)

	start := time.Now()
	ended, err := e.StopReplica(first, stopGrace)
	if err != nil {
		t.Fatal(err)
	}
	stopped := time.Since(start)
	if !ended {
		t.Errorf("replica %d did not end within %s of SIGTERM: it was killed", first, stopGrace)
	} else {
		t.Logf("replica %d ended %s after SIGTERM", first, stopped.Round(time.Millisecond))
	}
	// Had the lease not been handed back, the other replica would wait for
	// it to run out: at least leaseDuration minus a retry period after the
	// last renewal.
	next := leader(t, time.Minute)
	took := time.Since(start)
	if next == first {
		t.Fatalf("replica %d still leads after it was stopped", first)
	}
	if bound := leaseDuration - retryPeriod - time.Second; took >= bound {
		t.Errorf("replica %d led %s after SIGTERM to replica %d, want under %s (the lease handed back, not expired)", next, took.Round(time.Millisecond), first, bound)
	}
	t.Logf("replica %d led %s after SIGTERM", next, took.Round(time.Millisecond))
}

// withdrawLag is how long after SIGTERM a stopping replica's endpoint is
// withdrawn in TestDrainedReplicaFailsNoRequest: in a cluster the
// endpoints controller and the aggregator see a terminating pod a moment
// after the kubelet signals it.
const withdrawLag = time.Second

// TestDrainedReplicaFailsNoRequest: each replica in turn is stopped as
// Kubernetes stops a pod (SIGTERM, its endpoint withdrawn a second later)
// while four clients keep reading and writing through the host's
// aggregator: the stopping replica keeps serving for its
// --shutdown-delay-duration (2 s here) with /readyz failing, so the
// aggregator stops routing to it before it stops listening, and no request
// fails. (With no delay, the requests routed to it in that second fail.)
func TestDrainedReplicaFailsNoRequest(t *testing.T) {
	requireHA(t)
	restoreReplicas(t)
	e := framework.Env
	kc := karmada(t)
	probeNS := framework.Namespace(t, "drain-probe")
	roundTrip := policyRoundTrip(kc, probeNS)
	const clients = 4
	loads := make([]*load, clients)
	for c := range clients {
		loads[c] = startLoad(t, 3*time.Minute, func(ctx context.Context, i int, do doFunc) {
			_ = do(func(ctx context.Context) error {
				_, err := kc.ClusterV1alpha1().Clusters().List(ctx, metav1.ListOptions{})
				return err
			})
			roundTrip(ctx, i*clients+c, do)
		})
	}
	for r := range e.Replicas() {
		time.Sleep(2 * time.Second) // requests to both replicas before
		start := time.Now()
		ended, err := e.DrainReplica(t.Context(), r, withdrawLag, stopGrace)
		if err != nil {
			t.Fatal(err)
		}
		if !ended {
			t.Errorf("replica %d did not end within %s of SIGTERM", r, stopGrace)
		}
		t.Logf("replica %d drained and ended %s after SIGTERM", r, time.Since(start).Round(time.Millisecond))
		time.Sleep(2 * time.Second) // requests to the other one alone
		if err := e.RestartReplica(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	var requests int64
	for _, l := range loads {
		l.end()
		n, failures := l.result()
		requests += n
		for _, f := range failures {
			t.Errorf("client request failed %s after it started: %v", f.at.Sub(f.started).Round(time.Millisecond), f.err)
		}
	}
	if requests < 100 {
		t.Errorf("only %d client requests were made: the test shows little", requests)
	}
	t.Logf("both replicas drained in turn: %d client requests through the host, none failed", requests)
}
