package testbed

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// metricsList is the part of metrics.k8s.io/v1beta1 PodMetricsList and
// NodeMetricsList this test reads. (The root module does not require
// k8s.io/metrics, so its clientset is not used.)
type metricsList struct {
	Items []struct {
		Metadata   metav1.ObjectMeta   `json:"metadata"`
		Usage      corev1.ResourceList `json:"usage"` // nodes
		Containers []struct {
			Name  string              `json:"name"`
			Usage corev1.ResourceList `json:"usage"`
		} `json:"containers"` // pods
	} `json:"items"`
}

func getMetrics(ctx context.Context, c rest.Interface, path string, query map[string]string) (*metricsList, error) {
	req := c.Get().AbsPath("/apis/metrics.k8s.io/v1beta1", path)
	for k, v := range query {
		req = req.Param(k, v)
	}
	raw, err := req.DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET metrics.k8s.io %s: %w", path, err)
	}
	list := &metricsList{}
	return list, json.Unmarshal(raw, list)
}

// Each member runs metrics-server, fed by kwok's resource-usage emulation
// and served through the member's aggregator: pods report what their
// kwok.x-k8s.io/usage-* annotations say, and nodes report their usage.
func TestMemberServesResourceMetrics(t *testing.T) {
	t.Parallel()
	m := framework.Member(t, "member1")
	cs, err := m.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const ns, name = "default", "busy"
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					"kwok.x-k8s.io/usage-cpu":    "250m",
					"kwok.x-k8s.io/usage-memory": "64Mi",
				}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busy:1"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()

	// Through the member's kube-apiserver, as `kubectl top` asks.
	api := cs.Discovery().RESTClient()
	wantCPU, wantMem := resource.MustParse("250m"), resource.MustParse("64Mi")
	var last, logged string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		defer func() {
			if last != logged {
				t.Logf("%5.1f s: %s", time.Since(start).Seconds(), last)
				logged = last
			}
		}()
		pods, err := getMetrics(ctx, api, "namespaces/"+ns+"/pods", map[string]string{"labelSelector": "app=" + name})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if len(pods.Items) != 2 {
			last = fmt.Sprintf("%d PodMetrics, want 2", len(pods.Items))
			return false, nil
		}
		for _, p := range pods.Items {
			if len(p.Containers) != 1 {
				last = fmt.Sprintf("pod %s: %d containers in its metrics", p.Metadata.Name, len(p.Containers))
				return false, nil
			}
			cpu, mem := p.Containers[0].Usage[corev1.ResourceCPU], p.Containers[0].Usage[corev1.ResourceMemory]
			// CPU is a rate over two scrapes of a cumulative counter; allow 2%.
			if diff := cpu.MilliValue() - wantCPU.MilliValue(); diff < -5 || diff > 5 || mem.Cmp(wantMem) != 0 {
				last = fmt.Sprintf("pod %s uses cpu %s memory %s, want %s %s", p.Metadata.Name, cpu.String(), mem.String(), wantCPU.String(), wantMem.String())
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("PodMetrics of %s/%s did not report 250m CPU and 64Mi within 90 s: %v (last: %s); metrics-server log %s",
			ns, name, err, last, filepath.Join(framework.Env.Options.LogDir, m.Name, env.MetricsServerComponent+".log"))
	}
	t.Logf("PodMetrics reported 250m/64Mi %.1f s after the Deployment was created", time.Since(start).Seconds())

	nodes, err := getMetrics(ctx, api, "nodes", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) == 0 {
		t.Fatal("NodeMetrics list is empty")
	}
	for _, n := range nodes.Items {
		if n.Usage.Cpu().IsZero() || n.Usage.Memory().IsZero() {
			t.Errorf("node %s reports usage %v", n.Metadata.Name, n.Usage)
		}
	}

	// The environment exposes the member's metrics-server for direct queries.
	cfg, err := m.MetricsServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	direct, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	own, err := getMetrics(ctx, direct.Discovery().RESTClient(), "nodes", nil)
	if err != nil {
		t.Fatalf("metrics-server at %s: %v", cfg.Host, err)
	}
	if len(own.Items) != len(m.Nodes) {
		t.Errorf("metrics-server at %s: %d NodeMetrics, want %d", cfg.Host, len(own.Items), len(m.Nodes))
	}
}
