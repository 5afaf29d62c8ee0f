package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestOneWatchPerKindPerMember: with samples/search.yaml
// applied, as `make up` does, flotilla-apiserver holds one watch per
// (kind, member): the search cache's pods and nodes serve the member hub
// (cluster status, the scheduler's estimate, FederatedHPA, metrics), its
// Deployments the execution controller, which applied one to each member,
// and nothing watches them again.
func TestOneWatchPerKindPerMember(t *testing.T) {
	framework.ApplySample(t, "search.yaml")
	waitRegistryReady(t, "deployments-pods-nodes")
	const wns = "watches-e2e"
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: nginx:1.27}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`, wns))
	t.Cleanup(func() { _, _ = framework.Kubectl(t, "delete", "namespace", wns, "--ignore-not-found", "--wait=false") })
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		for _, m := range []string{"member1", "member2"} {
			if _, err := member(t, m).AppsV1().Deployments(wns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
				return m + ": " + err.Error()
			}
		}
		return ""
	})

	members := []string{"member1", "member2"}
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		ss, err := framework.FlotillaMetrics(ctx, t)
		if err != nil {
			return err.Error()
		}
		open := map[string]float64{}
		for _, s := range ss {
			if s.Name == "flotilla_member_watches" && slices.Contains(members, s.Labels["cluster"]) && s.Value != 0 {
				open[s.Labels["cluster"]+"/"+s.Labels["resource"]] = s.Value
			}
		}
		var problems []string
		for _, m := range members {
			for _, r := range []string{"pods", "nodes", "deployments.apps"} {
				if open[m+"/"+r] != 1 {
					problems = append(problems, fmt.Sprintf("%s/%s: %v watches, want 1", m, r, open[m+"/"+r]))
				}
			}
		}
		for k, v := range open {
			if v > 1 {
				problems = append(problems, fmt.Sprintf("%s: %v watches", k, v))
			}
		}
		slices.Sort(problems)
		return strings.Join(problems, "; ")
	})
}
