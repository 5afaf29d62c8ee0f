package autoscaling

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/discovery"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// TestCustomMetricsDiscoveryByAccess: the control plane's
// custom.metrics.k8s.io discovery lists, to each caller, the metrics of
// the members it may reach: a pod in member1 reports one metric and a pod
// in member2 another; the admin's discovery lists both, a user allowed
// clusters/proxy of member1 only lists member1's, never member2's.
func TestCustomMetricsDiscoveryByAccess(t *testing.T) {
	ns := framework.Namespace(t, "s8-discovery")
	pod := func(cluster, metric string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[2]s
  namespace: %[1]s
  annotations: {%[3]s: "1"}
spec: {containers: [{name: nginx, image: nginx:1.7.9}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Pod, name: %[2]s}]
  placement: {clusterAffinity: {clusterNames: [%[4]s]}}
`, ns, "only-"+cluster, env.CustomMetricsAnnotationPrefix+metric, cluster)
	}
	const m1, m2 = "member1_only_metric", "member2_only_metric"
	framework.Apply(t, pod("member1", m1)+"---\n"+pod("member2", m2))

	listed := func(ctx context.Context, d discovery.DiscoveryInterface) ([]string, error) {
		list, err := d.ServerResourcesForGroupVersion("custom.metrics.k8s.io/v1beta2")
		if err != nil {
			return nil, err
		}
		var names []string
		for _, r := range list.APIResources {
			names = append(names, r.Name)
		}
		return names, nil
	}
	admin := framework.HostClient(t).Discovery()
	// The members' metric lists are read again every 15 s.
	framework.Eventually(t, 3*time.Minute, func(ctx context.Context) string {
		names, err := listed(ctx, admin)
		if err != nil {
			return err.Error()
		}
		if !slices.Contains(names, "pods/"+m1) || !slices.Contains(names, "pods/"+m2) {
			return fmt.Sprintf("the admin's discovery lists %v, want pods/%s and pods/%s", names, m1, m2)
		}
		return ""
	})
	cfg := framework.ProxyServiceAccountConfig(t, "metrics-member1-only", "member1")
	names, err := listed(t.Context(), discovery.NewDiscoveryClientForConfigOrDie(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "pods/"+m1) || slices.Contains(names, "pods/"+m2) {
		t.Errorf("a user allowed member1 only: discovery lists %v, want pods/%s and not pods/%s", names, m1, m2)
	}
	// Someone allowed no cluster lists nothing.
	nobody := framework.ServiceAccountConfig(t, "metrics-no-cluster")
	if names, err := listed(t.Context(), discovery.NewDiscoveryClientForConfigOrDie(nobody)); err != nil || len(names) != 0 {
		t.Errorf("a user allowed no cluster: discovery lists %v (%v), want none", names, err)
	}
}
