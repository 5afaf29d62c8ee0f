// Package clusters is the e2e suite of joining and inspecting clusters and
// of the cluster proxy with per-user access, against flotilla-apiserver
// behind a real host aggregator and real members.
package clusters

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "clusters", env.Options{
		// member3 is not joined: TestRegister registers it in Pull mode.
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			// Short periods so the outage test runs in seconds.
			"--cluster-status-update-frequency=2s", "--cluster-failure-threshold=4s",
		}},
	}, "member1", "member2")
}

func karmada(t *testing.T) versioned.Interface {
	t.Helper()
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return versioned.NewForConfigOrDie(cfg)
}

// kubectl runs the kubectl built by make tools against the host as admin.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return kubectlAs(t, framework.Env.Host.Kubeconfig, args...)
}

// kubectlAs runs kubectl with a kubeconfig and a fresh discovery cache.
func kubectlAs(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(framework.Env.Options.BinDir, "kubectl"),
		append([]string{"--kubeconfig=" + kubeconfig, "--cache-dir=" + t.TempDir()}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestJoinedClusterStatus: a joined cluster shows its live status.
func TestJoinedClusterStatus(t *testing.T) {
	c, err := karmada(t).ClusterV1alpha1().Clusters().Get(t.Context(), "member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.SyncMode != clusterv1alpha1.Push || c.Spec.APIEndpoint != framework.Member(t, "member1").Server {
		t.Errorf("spec: mode %s endpoint %s", c.Spec.SyncMode, c.Spec.APIEndpoint)
	}
	if c.Spec.ID == "" || c.Spec.SecretRef == nil || c.Spec.ImpersonatorSecretRef == nil {
		t.Errorf("join left id %q, secretRef %v, impersonatorSecretRef %v", c.Spec.ID, c.Spec.SecretRef, c.Spec.ImpersonatorSecretRef)
	}
	ready := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != "ClusterReady" || ready.Message != "cluster is healthy and ready to accept workloads" {
		t.Errorf("Ready condition %+v", ready)
	}
	if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements) {
		t.Errorf("CompleteAPIEnablements not True: %+v", c.Status.Conditions)
	}
	if c.Status.KubernetesVersion != "v1.36.3" {
		t.Errorf("kubernetesVersion %q", c.Status.KubernetesVersion)
	}
	apps := slices.IndexFunc(c.Status.APIEnablements, func(e clusterv1alpha1.APIEnablement) bool { return e.GroupVersion == "apps/v1" })
	if apps < 0 || !slices.ContainsFunc(c.Status.APIEnablements[apps].Resources, func(r clusterv1alpha1.APIResource) bool {
		return r.Name == "deployments" && r.Kind == "Deployment"
	}) {
		t.Errorf("apiEnablements lack apps/v1 deployments")
	}
	// Ready comes with the node and resource summaries (the status is
	// written once the member's node and pod caches have listed).
	if c.Status.NodeSummary == nil || c.Status.ResourceSummary == nil {
		t.Fatalf("Ready without node or resource summary: %+v", c.Status)
	}
	if c.Status.NodeSummary.TotalNum != 2 || c.Status.NodeSummary.ReadyNum != 2 {
		t.Errorf("nodeSummary %+v, want 2/2", c.Status.NodeSummary)
	}
	if cpu := c.Status.ResourceSummary.Allocatable.Cpu().String(); cpu != "64" {
		t.Errorf("allocatable cpu %s, want 64 (2 nodes of 32)", cpu)
	}
	// The default resource models grade the nodes: 9 grades, every node
	// counted once (nodes of 32 CPUs and 256Gi with a few pods are graded 5
	// or 6).
	if m := c.Status.ResourceSummary.AllocatableModelings; len(m) != 9 {
		t.Errorf("allocatableModelings %+v, want the 9 default grades", m)
	} else if n := m[5].Count + m[6].Count; n != 2 {
		t.Errorf("allocatableModelings %+v, want the 2 nodes in grades 5 and 6", m)
	}
	cs, err := framework.Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(t.Context(), "karmada-es-member1", metav1.GetOptions{}); err != nil {
		t.Errorf("execution namespace: %v", err)
	}
	// The impersonation RBAC reaches the member as Works owned by the
	// Cluster, as in Karmada, and is applied there.
	err = wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		works, err := karmada(t).WorkV1alpha1().Works("karmada-es-member1").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		kinds := map[string]bool{}
		for _, w := range works.Items {
			if len(w.OwnerReferences) == 1 && w.OwnerReferences[0].Kind == "Cluster" && w.OwnerReferences[0].Name == "member1" &&
				meta.IsStatusConditionTrue(w.Status.Conditions, "Applied") {
				for _, m := range w.Spec.Workload.Manifests {
					if strings.Contains(string(m.Raw), `"name":"karmada-impersonator"`) {
						var tm metav1.TypeMeta
						_ = json.Unmarshal(m.Raw, &tm)
						kinds[tm.Kind] = true
					}
				}
			}
		}
		return kinds["ClusterRole"] && kinds["ClusterRoleBinding"], nil
	})
	if err != nil {
		t.Errorf("no applied Works carrying the karmada-impersonator ClusterRole and ClusterRoleBinding to member1")
	}
}

// TestKubectlGetClusters: kubectl get clusters prints Karmada's columns,
// server-side.
func TestKubectlGetClusters(t *testing.T) {
	out, err := kubectl(t, "get", "clusters")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Fields(lines[0]); !slices.Equal(got, []string{"NAME", "VERSION", "MODE", "READY", "AGE"}) {
		t.Errorf("header %v", got)
	}
	for _, name := range []string{"member1", "member2"} {
		if !slices.ContainsFunc(lines[1:], func(l string) bool {
			f := strings.Fields(l)
			return len(f) == 5 && f[0] == name && f[1] == "v1.36.3" && f[2] == "Push" && f[3] == "True"
		}) {
			t.Errorf("no Ready Push row for %s in\n%s", name, out)
		}
	}
	if out, err := kubectl(t, "get", "karmada-io"); err != nil {
		t.Errorf("kubectl get karmada-io: %v: %s", err, out)
	}
}

// TestClusterOutageAndRecovery: stopping a member's API server makes it not
// ready and tainted; starting it again heals both.
func TestClusterOutageAndRecovery(t *testing.T) {
	restart := framework.StopMember(t, "member2")
	k := karmada(t)
	wantTaint := func(c *clusterv1alpha1.Cluster, present bool) bool {
		has := slices.ContainsFunc(c.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == clusterv1alpha1.TaintClusterNotReady && t.Effect == corev1.TaintEffectNoSchedule
		})
		return has == present
	}
	var c *clusterv1alpha1.Cluster
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		c, err = k.ClusterV1alpha1().Clusters().Get(ctx, "member2", metav1.GetOptions{})
		return err == nil && meta.IsStatusConditionFalse(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) && wantTaint(c, true), nil
	})
	if err != nil {
		t.Fatalf("member2 not reported down: %+v %+v", c.Status.Conditions, c.Spec.Taints)
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond.Reason != "ClusterNotReachable" {
		t.Errorf("reason %s, want ClusterNotReachable", cond.Reason)
	}
	if err := restart(); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		c, err = k.ClusterV1alpha1().Clusters().Get(ctx, "member2", metav1.GetOptions{})
		return err == nil && meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) && wantTaint(c, false), nil
	})
	if err != nil {
		t.Fatalf("member2 did not heal: %+v %+v", c.Status.Conditions, c.Spec.Taints)
	}
}

// Invalid Clusters are refused with field errors and change nothing.
func TestInvalidClusterRejected(t *testing.T) {
	bad := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: "Sideways", APIEndpoint: "https://u:p@host"}}
	_, err := karmada(t).ClusterV1alpha1().Clusters().Create(t.Context(), bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.syncMode") || !strings.Contains(err.Error(), "spec.apiEndpoint") {
		t.Fatalf("got %v, want Invalid naming spec.syncMode and spec.apiEndpoint", err)
	}
	if _, err := karmada(t).ClusterV1alpha1().Clusters().Get(t.Context(), "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused cluster exists: %v", err)
	}
}

// writeFile writes data to a file in the test's temp dir and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
