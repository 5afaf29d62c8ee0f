package propagation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const s2Policy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s-propagation, namespace: %[2]s}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: %[1]s}
  placement:
    clusterAffinity: {clusterNames: [%[3]s]}
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
          - {targetCluster: {clusterNames: [member1]}, weight: 1}
          - {targetCluster: {clusterNames: [member2]}, weight: 1}
`

const s2Deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: nginx, image: nginx:1.7.9}]}
`

// TestWeightedDivision: a Deployment divided 1:1 by weight over member1
// and member2, with its aggregated status, events and binding on the
// control plane; scaling, moving, policy deletion and template deletion.
func TestWeightedDivision(t *testing.T) {
	const ns, name = "default", "nginx"
	t.Cleanup(func() { cleanupDefault(t, name) })
	apply(t, fmt.Sprintf(s2Deployment, name, ns, 2))
	apply(t, fmt.Sprintf(s2Policy, name, ns, "member1, member2"))
	wantDeployments(t, 90*time.Second, ns, name, map[string]string{"member1": "1/1", "member2": "1/1"})

	// The control plane shows the aggregated status, with no Pod of its own.
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		out, err := kubectl(t, "get", "deploy", name, "-n", ns, "--no-headers")
		if err != nil || !strings.Contains(out, "2/2") {
			return fmt.Sprintf("kubectl get deploy: %v %s", err, out)
		}
		return ""
	})
	pods, err := host(t).CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("pods on the control plane: %v %d", err, len(pods.Items))
	}
	eventually(t, 30*time.Second, func(ctx context.Context) string {
		return containsAll(eventReasons(ctx, t, ns, "Deployment", name),
			"ApplyPolicySucceed", "ScheduleBindingSucceed", "SyncWorkSucceed", "SyncSucceed", "AggregateStatusSucceed")
	})
	out, err := kubectl(t, "describe", "deploy", name, "-n", ns)
	if err != nil || !strings.Contains(out, "ScheduleBindingSucceed") {
		t.Errorf("kubectl describe deploy lists no events: %v\n%s", err, out)
	}
	if n := strings.Count(out, "SyncSucceed"); n < 2 {
		t.Errorf("describe shows %d SyncSucceed events, want one per cluster:\n%s", n, out)
	}
	rb, err := karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "nginx-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range rb.Spec.Clusters {
		got = append(got, fmt.Sprintf("%s:%d", c.Name, c.Replicas))
	}
	if !slices.Equal(got, []string{"member1:1", "member2:1"}) {
		t.Errorf("binding clusters %v", got)
	}
	out, err = kubectl(t, "get", "resourcebinding", "-n", ns)
	if err != nil || !strings.Contains(out, "nginx-deployment") {
		t.Errorf("kubectl get resourcebinding: %v\n%s", err, out)
	}

	// Scaling the template to 4 gives 2+2.
	if out, err := kubectl(t, "scale", "deploy", name, "-n", ns, "--replicas=4"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	wantDeployments(t, 60*time.Second, ns, name, map[string]string{"member1": "2/2", "member2": "2/2"})

	// Moving the policy to member2 only moves every replica there.
	apply(t, fmt.Sprintf(s2Policy, name, ns, "member2"))
	wantDeployments(t, 60*time.Second, ns, name, map[string]string{"member1": "-", "member2": "4/4"})

	// Deleting the policy leaves the member Deployment in place.
	if out, err := kubectl(t, "delete", "pp", name+"-propagation", "-n", ns, "--timeout=30s"); err != nil {
		t.Fatalf("deleting the policy: %v %s", err, out)
	}
	time.Sleep(3 * time.Second)
	wantDeployments(t, 5*time.Second, ns, name, map[string]string{"member1": "-", "member2": "4/4"})

	// Deleting the Deployment removes it from every member.
	if out, err := kubectl(t, "delete", "deploy", name, "-n", ns); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	wantDeployments(t, 60*time.Second, ns, name, map[string]string{"member1": "-", "member2": "-"})
}

// TestPolicyFirst: the policy may come before or after the Deployment.
func TestPolicyFirst(t *testing.T) {
	const ns, name = "default", "web"
	t.Cleanup(func() { cleanupDefault(t, name) })
	apply(t, fmt.Sprintf(s2Policy, name, ns, "member1, member2"))
	time.Sleep(time.Second)
	apply(t, fmt.Sprintf(s2Deployment, name, ns, 2))
	wantDeployments(t, 90*time.Second, ns, name, map[string]string{"member1": "1/1", "member2": "1/1"})
	if out, err := kubectl(t, "delete", "deploy", name, "-n", ns); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	wantDeployments(t, 60*time.Second, ns, name, map[string]string{"member1": "-", "member2": "-"})
}

// cleanupDefault deletes what a weighted-division test may have left in
// default when it failed half-way: the Deployment name and its policy.
func cleanupDefault(t *testing.T, name string) {
	_, _ = kubectl(t, "delete", "-n", "default", "--ignore-not-found", "deployment/"+name, "propagationpolicy/"+name+"-propagation")
}
