package search

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// rss is flotilla-apiserver's resident set in bytes.
func rss(t *testing.T) int64 {
	t.Helper()
	p := framework.Env.Host.Process(env.FlotillaComponent)
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// liveHeap forces a garbage collection in flotilla-apiserver (through its
// profiling endpoint) and returns the bytes of heap objects left.
func liveHeap(t *testing.T) int64 {
	t.Helper()
	cfg := config(t, framework.Env.Host)
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", framework.Env.Host.Ports.Flotilla)
	cfg.Insecure, cfg.CAData = true, nil
	c := httpClient(t, cfg)
	for _, path := range []string{"/debug/pprof/heap?gc=1", "/metrics"} {
		resp, err := c.Get(cfg.Host + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if path != "/metrics" {
			continue
		}
		for _, l := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(l, "go_memstats_heap_alloc_bytes "); ok {
				f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return int64(f)
			}
		}
	}
	t.Fatal("flotilla-apiserver's /metrics has no go_memstats_heap_alloc_bytes")
	return 0
}

// settledRSS samples the RSS for a few seconds and returns the lowest: the
// garbage collector has run and the figure is what the server keeps.
func settledRSS(t *testing.T, d time.Duration) int64 {
	t.Helper()
	low := rss(t)
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		low = min(low, rss(t))
	}
	return low
}

// pod is a realistic workload pod: two containers with resources, probes,
// env, labels and annotations, as a Deployment would make it. It names a
// scheduler that does not run, so no scheduler, kwok or pod garbage
// collector touches it; runningStatus then gives it the status of a
// running pod. As served, with the API server's defaults and without
// managedFields, it is about 3 KB of JSON.
func pod(ns string, i int) *corev1.Pod {
	app := fmt.Sprintf("app-%d", i%50)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%07d", app, i), Namespace: ns,
			Labels:      map[string]string{"app": app, "tier": []string{"web", "api", "batch"}[i%3], "pod-template-hash": fmt.Sprintf("%08x", i%50*2654435761%(1<<32))},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
		},
		Spec: corev1.PodSpec{
			SchedulerName: "bench-not-scheduled",
			Containers: []corev1.Container{
				{Name: "main", Image: []string{"nginx:1.19", "redis:7.2", "busybox:1.36", "registry.example.com/team/service:v" + strconv.Itoa(i%7)}[i%4],
					Ports: []corev1.ContainerPort{{ContainerPort: 8080, Name: "http"}},
					Env:   []corev1.EnvVar{{Name: "APP", Value: app}, {Name: "LOG_LEVEL", Value: "info"}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
					},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstrFromInt(8080)}}, PeriodSeconds: 10}},
				{Name: "sidecar", Image: "envoyproxy/envoy:v1.30", Args: []string{"--config-path", "/etc/envoy/envoy.yaml"}},
			},
		},
	}
}

// runningStatus is the status of a running pod with two ready containers.
func runningStatus(p *corev1.Pod, i int) {
	now := metav1.Now()
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable, StartTime: &now,
		HostIP: "10.0.0.1", HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}},
		PodIP: fmt.Sprintf("10.%d.%d.%d", 100+i/65536%100, i/256%256, i%256)}
	p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
	for _, c := range []corev1.PodConditionType{corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true, Started: ptrTrue(),
			ImageID: "docker-pullable://" + c.Image + "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
}

// createPods creates n pods in a member, spread over namespaces ns-0..ns-9
// (or all in one namespace), with 32 workers.
func createPods(t *testing.T, cs kubernetes.Interface, n, offset int, namespace string) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 32 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				ns := namespace
				if ns == "" {
					ns = fmt.Sprintf("ns-%d", i%10)
				}
				p, err := cs.CoreV1().Pods(ns).Create(t.Context(), pod(ns, offset+i), metav1.CreateOptions{})
				if err == nil {
					runningStatus(p, offset+i)
					_, err = cs.CoreV1().Pods(ns).UpdateStatus(t.Context(), p, metav1.UpdateOptions{})
				}
				if err != nil && !apierrors.IsAlreadyExists(err) {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

func ensureNamespaces(t *testing.T, cs kubernetes.Interface, names ...string) {
	t.Helper()
	for _, n := range names {
		_, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// createRegistry creates the registry and waits until it caches every pod.
func createRegistry(t *testing.T, k versioned.Interface, reg *searchv1alpha1.ResourceRegistry) {
	t.Helper()
	if _, err := k.SearchV1alpha1().ResourceRegistries().Create(t.Context(), reg.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCached(t, k, 10*time.Minute)
}

// deleteRegistry deletes the registry and waits until pods are no longer cached.
func deleteRegistry(t *testing.T, k versioned.Interface, host *rest.Config) {
	t.Helper()
	if err := k.SearchV1alpha1().ResourceRegistries().Delete(t.Context(), "bench", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Nothing cached: a list answers empty (in the kind's own list type,
	// as Karmada's search does), where it held bigNamespace's pods.
	c := httpClient(t, host)
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
			host.Host+"/apis/search.karmada.io/v1alpha1/search/cache/api/v1/namespaces/"+bigNamespace+"/pods?limit=1", nil)
		resp, err := c.Do(req)
		if err != nil {
			return false, nil
		}
		defer func() { _ = resp.Body.Close() }()
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&list) != nil {
			return false, nil
		}
		return len(list.Items) == 0, nil
	})
	if err != nil {
		t.Fatalf("pods still cached after the registry was deleted: %v", err)
	}
}

// waitCached waits until the registry reports every pod store listed.
func waitCached(t *testing.T, k versioned.Interface, timeout time.Duration) {
	t.Helper()
	var cond *metav1.Condition
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		r, err := k.SearchV1alpha1().ResourceRegistries().Get(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		cond = meta.FindStatusCondition(r.Status.Conditions, "Ready")
		return cond != nil && cond.Status == metav1.ConditionTrue && strings.Contains(cond.Message, "member1, member2, member3"), nil
	})
	if err != nil {
		t.Fatalf("the registry did not report the pods cached: %+v", cond)
	}
}

// getJSON GETs a path with Accept: application/json and returns the time
// until the whole body was read, and the body's size.
func getJSON(t *testing.T, client *http.Client, url string) (time.Duration, int) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	req.Header.Set("Accept", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	n := 0
	buf := make([]byte, 256<<10)
	for {
		k, err := resp.Body.Read(buf)
		n += k
		if err != nil {
			break
		}
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	return time.Since(start), n
}

func httpClient(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
