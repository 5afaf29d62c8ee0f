package failover

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// preservedLabel is the label the state-preservation rule of
// TestApplicationFailover writes.
const preservedLabel = "failover.example.io/ready-replicas"

// oneCluster is a Deployment of 2 replicas and a policy placing it, whole,
// in one of member1 and member2, with application failover: unhealthy
// for 5 s, it leaves its cluster at once, and its ready replicas there
// go with it as a label.
func oneCluster(ns string) string {
	return web(ns, 2) + fmt.Sprintf(`spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}]
    replicaScheduling: {replicaSchedulingType: Duplicated}
  failover:
    application:
      decisionConditions: {tolerationSeconds: 5}
      purgeMode: Immediately
      statePreservation:
        rules: [{aliasLabelName: %s, jsonPath: "{.readyReplicas}"}]
`, preservedLabel)
}

// placedWhole waits until web runs whole in one cluster, Ready and
// reported Healthy there (state is preserved from the aggregated status),
// and returns that cluster and the other one.
func placedWhole(t *testing.T, ns string) (from, to string) {
	t.Helper()
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if len(b.Spec.Clusters) != 1 {
			return "scheduled to " + clustersOf(b)
		}
		from = b.Spec.Clusters[0].Name
		if msg := readyIn(ctx, t, from, ns, 2); msg != "" {
			return msg
		}
		// The state is taken from the aggregated status.
		for _, s := range b.Status.AggregatedStatus {
			if s.ClusterName == from && s.Health == workv1alpha2.ResourceHealthy {
				return ""
			}
		}
		return "not yet reported healthy in " + from
	})
	return from, map[string]string{"member1": "member2", "member2": "member1"}[from]
}

// movedWhole waits until web runs whole (2 replicas, Ready) in cluster to
// and is gone from cluster from.
func movedWhole(t *testing.T, ns, from, to string) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if got := clustersOf(b); got != to+":2" {
			return "scheduled to " + got
		}
		if msg := readyIn(ctx, t, to, ns, 2); msg != "" {
			return msg
		}
		return goneFrom(ctx, t, from, ns)
	})
}

// TestApplicationFailover: web runs in one cluster; an
// OverridePolicy then points its image at the test bed's fake registry
// there, so its new pod is never Ready and the Deployment is Unhealthy.
// After the policy's 5 s it leaves that cluster (Immediately: its
// Deployment there goes at once), the scheduler places it in the other
// cluster (not back: the open task keeps it away), and the Deployment
// there carries the state preserved from the first, its 2 ready replicas,
// as a label.
func TestApplicationFailover(t *testing.T) {
	ns := framework.Namespace(t, "fo-app")
	framework.Apply(t, oneCluster(ns))
	from, to := placedWhole(t, ns)

	// Every version of web in the other cluster, from before the failover.
	w, err := framework.MemberClient(t, to).AppsV1().Deployments(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: unpullable, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [%s]}
    overriders:
      imageOverrider: [{component: Registry, operator: replace, value: %s}]
`, ns, from, env.FakeImageRegistry))

	movedWhole(t, ns, from, to)
	wantEvent(t, ns, "web-deployment", "EvictWorkloadFromClusterSucceed", "Evict from cluster "+from+" succeed.")
	wantEvent(t, ns, "web", "EvictWorkloadFromClusterSucceed", "Evict from cluster "+from+" succeed.")

	// The state reached the new cluster's Deployment.
	wantPreservedLabel(t, w, from, to)
}

// TestFailoverValidation: a failover Karmada could not act on is refused
// with field errors kubectl shows, and nothing is stored.
func TestFailoverValidation(t *testing.T) {
	ns := framework.Namespace(t, "fo-invalid")
	manifest := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bad, namespace: %s}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  failover:
    application:
      decisionConditions: {tolerationSeconds: -1}
      purgeMode: Eventually
      statePreservation:
        rules: [{aliasLabelName: example.io/state}]
    cluster:
      purgeMode: Never
`, ns)
	f := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := framework.Kubectl(t, "apply", "-f", f)
	for _, field := range []string{
		"spec.failover.application.decisionConditions.tolerationSeconds: Invalid value: -1",
		`spec.failover.application.purgeMode: Unsupported value: "Eventually"`,
		"spec.failover.application.statePreservation.rules[0].jsonPath: Required value",
		`spec.failover.cluster.purgeMode: Unsupported value: "Never"`,
	} {
		if err == nil || !strings.Contains(out, field) {
			t.Errorf("kubectl apply of a bad failover: %v\n%s\nwant the field error %q", err, out, field)
		}
	}
	if _, err := framework.Karmada(t).PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused policy: %v, want NotFound", err)
	}
}

// TestClusterFailoverPreservesState: web runs whole in
// one cluster; that cluster gets a NoExecute taint the policy does not
// tolerate; failover.cluster (Directly, with a state-preservation rule)
// moves it at once to the other cluster, whose Deployment carries the
// ready replicas it had as a label.
func TestClusterFailoverPreservesState(t *testing.T) {
	ns := framework.Namespace(t, "fo-cluster-state")
	manifest := strings.Replace(oneCluster(ns), `  failover:
    application:
      decisionConditions: {tolerationSeconds: 5}
      purgeMode: Immediately
`, `  failover:
    cluster:
      purgeMode: Directly
`, 1)
	if manifest == oneCluster(ns) {
		t.Fatal("the policy was not rewritten to cluster failover")
	}
	framework.Apply(t, manifest)
	from, to := placedWhole(t, ns)
	w, err := framework.MemberClient(t, to).AppsV1().Deployments(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	kubectl(t, "patch", "cluster", from, "--type=merge", "-p", `{"spec":{"taints":[{"key":"fo-cluster-state","effect":"NoExecute"}]}}`)
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "patch", "cluster", from, "--type=merge", "-p", `{"spec":{"taints":null}}`)
	})
	movedWhole(t, ns, from, to)
	wantPreservedLabel(t, w, from, to)
}

// wantPreservedLabel waits for w, a watch of web in cluster to, to show it
// with the label preservedLabel=2: the ready replicas it had in from.
func wantPreservedLabel(t *testing.T, w watch.Interface, from, to string) {
	t.Helper()
	var labels []string
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch of %s ended; labels seen: %v", to, labels)
			}
			d, isDeployment := ev.Object.(*appsv1.Deployment)
			if !isDeployment || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			v, has := d.Labels[preservedLabel]
			labels = append(labels, fmt.Sprintf("%q (%v)", v, has))
			if v == "2" {
				return
			}
		case <-deadline:
			t.Fatalf("web in %s never had the label %s=2 (the ready replicas it had in %s); seen: %v", to, preservedLabel, from, labels)
		}
	}
}
