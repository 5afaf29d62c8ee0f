package autoscaling

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestMetricsShareSearchCache: while a ResourceRegistry caches member1's
// Pods and Nodes in every namespace, the metrics adapter's informers read
// that cache instead of watching member1 again (member2, which no
// registry caches, is still watched directly); pods are located through
// either source; when the registry goes, member1 is watched again.
func TestMetricsShareSearchCache(t *testing.T) {
	ns := framework.Namespace(t, "s8-shared")
	framework.Apply(t, nginx(ns, 2, "20m"))
	framework.Apply(t, `apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: s8-shared}
spec:
  targetCluster: {clusterNames: [member1]}
  resourceSelectors:
  - {apiVersion: v1, kind: Pod}
  - {apiVersion: v1, kind: Node}
`)
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "resourceregistry", "s8-shared", "--ignore-not-found")
	})
	want := func(sources map[string]string) func(ctx context.Context) string {
		return func(ctx context.Context) string {
			got, err := informerSources(ctx, t)
			if err != nil {
				return err.Error()
			}
			for k, v := range sources {
				if got[k] != v {
					return fmt.Sprintf("member informer sources %v, want %v", got, sources)
				}
			}
			return ""
		}
	}
	framework.Eventually(t, 90*time.Second, want(map[string]string{
		"member1/pods": "shared", "member1/nodes": "shared", "member2/pods": "member", "member2/nodes": "member"}))

	located := func(ctx context.Context) string {
		list, err := controlPlaneMetrics(t).MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
		if err != nil {
			return err.Error()
		}
		from := map[string]int{}
		for _, pm := range list.Items {
			from[pm.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey]]++
		}
		if from["member1"] != 1 || from["member2"] != 1 {
			return fmt.Sprintf("pod metrics by cluster %v, want one from each member", from)
		}
		return ""
	}
	framework.Eventually(t, 90*time.Second, located)
	nodes, err := controlPlaneMetrics(t).MetricsV1beta1().NodeMetricses().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byCluster := map[string]int{}
	for _, n := range nodes.Items {
		byCluster[n.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey]]++
	}
	if byCluster["member1"] == 0 || byCluster["member2"] == 0 {
		t.Errorf("node metrics by cluster %v, want nodes of both members", byCluster)
	}

	// Scaled while read from the cache: the new pods are located too.
	if _, err := framework.Kubectl(t, "-n", ns, "scale", "deployment", "nginx", "--replicas=4"); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		list, err := controlPlaneMetrics(t).MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
		if err != nil {
			return err.Error()
		}
		if len(list.Items) != 4 {
			return fmt.Sprintf("%d pod metrics, want 4", len(list.Items))
		}
		return ""
	})

	if out, err := framework.Kubectl(t, "delete", "resourceregistry", "s8-shared"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	framework.Eventually(t, 90*time.Second, want(map[string]string{"member1/pods": "member", "member1/nodes": "member"}))
	if out, err := framework.Kubectl(t, "-n", ns, "scale", "deployment", "nginx", "--replicas=2"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	framework.Eventually(t, 2*time.Minute, located)
}

// informerSources reads flotilla_member_informer_source from
// flotilla-apiserver's /metrics: "cluster/resource" → the source at 1.
func informerSources(ctx context.Context, t *testing.T) (map[string]string, error) {
	ss, err := framework.FlotillaMetrics(ctx, t)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, s := range ss {
		if s.Name == "flotilla_member_informer_source" && s.Value == 1 {
			out[s.Labels["cluster"]+"/"+s.Labels["resource"]] = s.Labels["source"]
		}
	}
	return out, nil
}
