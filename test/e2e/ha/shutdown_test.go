package ha

import (
	"testing"
	"time"

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
