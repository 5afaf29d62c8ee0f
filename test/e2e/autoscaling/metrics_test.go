package autoscaling

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestTopOnControlPlane: metrics.k8s.io on the control plane lists the
// pods and nodes of every member, each marked with its cluster, and
// `kubectl top` works against it.
func TestTopOnControlPlane(t *testing.T) {
	ns := framework.Namespace(t, "s8-top")
	framework.Apply(t, nginx(ns, 4, "20m"))
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		pods, err := runningPods(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if len(pods["member1"]) != 2 || len(pods["member2"]) != 2 {
			return fmt.Sprintf("running pods %v, want 2 in each member", pods)
		}
		return ""
	})

	mc := controlPlaneMetrics(t)
	// Two scrapes of metrics-server after the pods started.
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		list, err := mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
		if err != nil {
			return err.Error()
		}
		from := map[string]int{}
		for _, pm := range list.Items {
			from[pm.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey]]++
			// kwok's emulated counter is a rate measured between scrapes:
			// a few nanocores off.
			if len(pm.Containers) != 1 || pm.Containers[0].Usage.Cpu().MilliValue() < 19 || pm.Containers[0].Usage.Cpu().MilliValue() > 21 {
				return fmt.Sprintf("pod %s: containers %+v, want one using 20m CPU", pm.Name, pm.Containers)
			}
		}
		if from["member1"] != 2 || from["member2"] != 2 {
			return fmt.Sprintf("pod metrics by cluster %v, want 2 from each member", from)
		}
		return ""
	})

	// Get by name finds the pod in its member.
	pods, err := runningPods(t.Context(), t, ns)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := mc.MetricsV1beta1().PodMetricses(ns).Get(t.Context(), pods["member2"][0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pm.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey]; got != "member2" {
		t.Errorf("pod metrics of %s come from %q, want member2", pm.Name, got)
	}

	out, err := framework.Kubectl(t, "top", "pods", "-n", ns)
	if err != nil {
		t.Fatalf("kubectl top pods: %v\n%s", err, out)
	}
	for _, m := range members {
		for _, p := range pods[m] {
			if !strings.Contains(out, p) {
				t.Errorf("kubectl top pods does not list %s of %s:\n%s", p, m, out)
			}
		}
	}

	nodes, err := mc.MetricsV1beta1().NodeMetricses().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var fromNodes []string
	for _, n := range nodes.Items {
		fromNodes = append(fromNodes, n.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey])
	}
	sort.Strings(fromNodes)
	// Every member node has metrics, even one without pods: kwok's nodes
	// use some CPU and memory of their own, as real ones do.
	var want []string
	for _, m := range members {
		ns, err := member(t, m).CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for range ns.Items {
			want = append(want, m)
		}
	}
	sort.Strings(want)
	if strings.Join(fromNodes, ",") != strings.Join(want, ",") {
		t.Errorf("node metrics come from %v, want one per member node %v", fromNodes, want)
	}
	if out, err := framework.Kubectl(t, "top", "nodes"); err != nil || len(strings.Split(strings.TrimSpace(out), "\n")) != len(nodes.Items)+1 {
		t.Errorf("kubectl top nodes: %v\n%s\nwant %d nodes", err, out, len(nodes.Items))
	}
}
