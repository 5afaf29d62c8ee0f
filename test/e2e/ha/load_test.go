package ha

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// requestTimeout bounds one request of the client load.
const requestTimeout = 10 * time.Second

// failure is one failed request of the client load.
type failure struct {
	started, at time.Time
	err         error
}

// doFunc makes one request of the load and counts it; it returns the
// request's error.
type doFunc func(req func(context.Context) error) error

// load is a client that keeps making requests to flotilla-apiserver's
// APIs through the host, one after the other, and counts them.
type load struct {
	requests atomic.Int64
	mu       sync.Mutex
	failures []failure
	slowest  time.Duration
	stop     context.CancelFunc
	done     chan struct{}
}

// startLoad runs iteration (which makes requests with do) in a loop until
// the returned load is stopped, at most for limit.
func startLoad(t *testing.T, limit time.Duration, iteration func(ctx context.Context, i int, do doFunc)) *load {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), limit)
	l := &load{stop: cancel, done: make(chan struct{})}
	do := func(req func(context.Context) error) error {
		rctx, rcancel := context.WithTimeout(ctx, requestTimeout)
		defer rcancel()
		started := time.Now()
		err := req(rctx)
		if ctx.Err() != nil {
			return ctx.Err() // stopped: the request was cut, not failed
		}
		l.requests.Add(1)
		l.mu.Lock()
		l.slowest = max(l.slowest, time.Since(started))
		if err != nil {
			l.failures = append(l.failures, failure{started: started, at: time.Now(), err: err})
		}
		l.mu.Unlock()
		return err
	}
	go func() {
		defer close(l.done)
		for i := 0; ctx.Err() == nil; i++ {
			iteration(ctx, i, do)
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(l.end)
	return l
}

// end stops the load and waits for its last request.
func (l *load) end() {
	l.stop()
	<-l.done
}

// result returns the counts and the failures so far.
func (l *load) result() (requests int64, failures []failure) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requests.Load(), append([]failure(nil), l.failures...)
}

// slowestRequest is the longest a request of the load has taken so far.
func (l *load) slowestRequest() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.slowest
}

// policyRoundTrip is a load iteration that writes and reads: it creates a
// PropagationPolicy in ns, reads it back and deletes it (when it was
// created: the requests after a failed create would fail for that alone).
func policyRoundTrip(kc versioned.Interface, ns string) func(ctx context.Context, i int, do doFunc) {
	return func(ctx context.Context, i int, do doFunc) {
		name := fmt.Sprintf("probe-%d", i)
		pp := &policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: name}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
			},
		}
		pps := kc.PolicyV1alpha1().PropagationPolicies(ns)
		if do(func(ctx context.Context) error { _, err := pps.Create(ctx, pp, metav1.CreateOptions{}); return err }) != nil {
			return
		}
		_ = do(func(ctx context.Context) error { _, err := pps.Get(ctx, name, metav1.GetOptions{}); return err })
		_ = do(func(ctx context.Context) error { return pps.Delete(ctx, name, metav1.DeleteOptions{}) })
	}
}

// karmada is a client of flotilla-apiserver's APIs through the host that
// is not throttled by client-go's default 5 requests per second.
func karmada(t *testing.T) versioned.Interface {
	t.Helper()
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	return versioned.NewForConfigOrDie(cfg)
}

// leader waits until a running replica holds the controllers' lease and
// returns it.
func leader(t *testing.T, timeout time.Duration) int {
	t.Helper()
	who := -1
	framework.Eventually(t, timeout, func(ctx context.Context) string {
		var err error
		if who, err = framework.Env.FlotillaLeader(ctx); err != nil {
			return err.Error()
		}
		if who < 0 {
			return "no running replica holds the controllers' lease"
		}
		return ""
	})
	return who
}

// restoreReplicas starts every killed replica again when the test ends and
// publishes its endpoint, so the next test finds both replicas serving.
func restoreReplicas(t *testing.T) {
	t.Cleanup(func() {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		for i := range framework.Env.Replicas() {
			if err := framework.Env.RestartReplica(ctx, i); err != nil {
				t.Errorf("restarting replica %d: %v", i, err)
			}
		}
	})
}
