package search

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestOneWatchPerKindPerMember: with samples/search.yaml applied, as
// `make up` does, and ConfigMaps cached too, flotilla-apiserver holds one
// watch per (kind, member): the search cache's pods and nodes serve the
// member hub (cluster status, the scheduler's estimate, FederatedHPA,
// metrics), its Deployments and ConfigMaps the hub's informers of the
// kinds the execution controller applied (a Deployment and a ConfigMap in
// each member), and nothing watches them again. A kind execution alone
// applies (ServiceAccounts, here) is watched once, by the hub.
func TestOneWatchPerKindPerMember(t *testing.T) {
	framework.ApplySample(t, "search.yaml")
	waitRegistryReady(t, "deployments-pods-nodes")
	const wns = "watches-e2e"
	framework.Apply(t, `apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: watches-e2e-configmaps}
spec:
  targetCluster: {clusterNames: [member1, member2]}
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
`)
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "resourceregistries.search.karmada.io", "watches-e2e-configmaps", "--ignore-not-found", "--wait=false")
	})
	waitRegistryReady(t, "watches-e2e-configmaps")
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
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: %[1]s}
data: {greeting: hello}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: web, namespace: %[1]s}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: web}
    - {apiVersion: v1, kind: ConfigMap, name: web-config}
    - {apiVersion: v1, kind: ServiceAccount, name: web}
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`, wns))
	t.Cleanup(func() { _, _ = framework.Kubectl(t, "delete", "namespace", wns, "--ignore-not-found", "--wait=false") })
	members := []string{"member1", "member2"}
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		for _, m := range members {
			cs := member(t, m)
			if _, err := cs.AppsV1().Deployments(wns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
				return m + ": " + err.Error()
			}
			if _, err := cs.CoreV1().ConfigMaps(wns).Get(ctx, "web-config", metav1.GetOptions{}); err != nil {
				return m + ": " + err.Error()
			}
			if _, err := cs.CoreV1().ServiceAccounts(wns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
				return m + ": " + err.Error()
			}
		}
		return ""
	})

	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		open, err := framework.MemberWatches(ctx, t, members...)
		if err != nil {
			return err.Error()
		}
		return framework.OneWatchEach(open, members, []string{"pods", "nodes", "deployments.apps", "configmaps", "serviceaccounts"})
	})

	// Execution reads the shared copies: a change made in the member is
	// undone within seconds, a deletion too.
	cs := member(t, "member1")
	if _, err := cs.CoreV1().ConfigMaps(wns).Patch(t.Context(), "web-config", types.MergePatchType,
		[]byte(`{"data":{"greeting":"changed in the member"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		cm, err := cs.CoreV1().ConfigMaps(wns).Get(ctx, "web-config", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if cm.Data["greeting"] != "hello" {
			return "greeting " + cm.Data["greeting"]
		}
		return ""
	})
	old, err := cs.AppsV1().Deployments(wns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.AppsV1().Deployments(wns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		d, err := cs.AppsV1().Deployments(wns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if d.UID == old.UID {
			return "not deleted yet"
		}
		return ""
	})
}
