package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/test/env"
)

// RecordBench prints a benchmark's figures and appends them to
// _output/bench/<name>.
func RecordBench(t *testing.T, name, text string) {
	t.Helper()
	fmt.Print(text)
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "_output", "bench")
	_ = os.MkdirAll(dir, 0o755)
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		_ = f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil { // the line is on disk only once closed
		t.Fatal(err)
	}
}

// Percentile returns the p-th (0..1) of durations, nearest rank below.
func Percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// ServedRequests are the metrics of the requests flotilla-apiserver's
// storage served: over HTTP, and in process (the embedded controllers',
// with the same labels).
var ServedRequests = []string{"apiserver_request_total", "flotilla_inprocess_requests_total"}

// Served sums the requests flotilla-apiserver's storage served, over HTTP
// and in process, whose labels satisfy keep.
func Served(ss Samples, keep func(map[string]string) bool) float64 {
	var n float64
	for _, name := range ServedRequests {
		n += ss.Sum(name, keep)
	}
	return n
}

// IsWrite tells whether an HTTP method or API verb changes state.
func IsWrite(verb string) bool {
	switch strings.ToUpper(verb) {
	case "POST", "PUT", "PATCH", "DELETE", "CREATE", "UPDATE", "APPLY", "DELETECOLLECTION":
		return true
	}
	return false
}

// ControlPlaneWrites sums the writes flotilla-apiserver's storage served,
// over HTTP and in process.
func ControlPlaneWrites(ss Samples) float64 {
	return Served(ss, func(l map[string]string) bool { return IsWrite(l["verb"]) })
}

// FastClients are clients of the host without client-go's default 5
// requests/s, so that a benchmark's own requests are not what it measures.
func FastClients(t *testing.T) (kubernetes.Interface, versioned.Interface) {
	t.Helper()
	cfg, err := Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 5000, 5000
	return kubernetes.NewForConfigOrDie(cfg), versioned.NewForConfigOrDie(cfg)
}

// RestartFlotilla stops flotilla-apiserver (SIGTERM, so it hands its lease
// over) and starts it with args, or with its own arguments when args is
// nil, and waits until the host serves its APIs again.
func RestartFlotilla(ctx context.Context, t *testing.T, args []string) {
	t.Helper()
	p := Env.Host.Process(env.FlotillaComponent)
	if !p.Stop(20 * time.Second) {
		t.Log("flotilla-apiserver did not end within 20 s of SIGTERM; it was killed")
	}
	if args != nil {
		p.Args = args
	}
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	hc, _ := FastClients(t)
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := hc.Discovery().RESTClient().Get().AbsPath("/apis/cluster.karmada.io/v1alpha1/clusters").DoRaw(ctx)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("flotilla-apiserver is not served after a restart: %v", err)
	}
}

// WithControllers returns flotilla-apiserver's arguments with --controllers
// set to list.
func WithControllers(list string) []string {
	var out []string
	for _, a := range Env.Host.Process(env.FlotillaComponent).Args {
		if !strings.HasPrefix(a, "--controllers=") {
			out = append(out, a)
		}
	}
	return append(out, "--controllers="+list)
}

// CreateAll creates n objects with workers goroutines, calling create(i);
// an object that already exists counts as created.
func CreateAll(t *testing.T, n, workers int, create func(ctx context.Context, i int) error) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := create(t.Context(), i); err != nil && !apierrors.IsAlreadyExists(err) {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
}
