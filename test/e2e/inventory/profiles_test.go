package inventory

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/inventory"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestProfileOfEveryMember: each of the three members has its
// ClusterProfile in the inventory namespace: Flotilla as its manager, the
// member's Kubernetes version and cluster ID, ControlPlaneHealthy and
// Joined True, one access provider at the control plane's proxy of it; the
// inventory namespace stays on the control plane.
func TestProfileOfEveryMember(t *testing.T) {
	k := framework.Karmada(t)
	for _, cluster := range []string{"member1", "member2", "member3"} {
		c, err := k.ClusterV1alpha1().Clusters().Get(t.Context(), cluster, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitProfile(t, cluster, time.Minute, func(p *unstructured.Unstructured, err error) string {
			if err != nil {
				return err.Error()
			}
			version, _, _ := unstructured.NestedString(p.Object, "status", "version", "kubernetes")
			manager, _, _ := unstructured.NestedString(p.Object, "spec", "clusterManager", "name")
			providers, _, _ := unstructured.NestedSlice(p.Object, "status", "accessProviders")
			var server string
			if len(providers) == 1 {
				server, _, _ = unstructured.NestedString(providers[0].(map[string]any), "cluster", "server")
			}
			switch {
			case p.GetLabels()[multiclusterv1alpha1.LabelClusterManager] != inventory.Manager || manager != inventory.Manager:
				return fmt.Sprintf("manager label %v, spec %q", p.GetLabels(), manager)
			case version == "" || version != c.Status.KubernetesVersion:
				return fmt.Sprintf("version %q, the cluster's %q", version, c.Status.KubernetesVersion)
			case property(p, multiclusterv1alpha1.PropertyClusterID) != c.Spec.ID:
				return fmt.Sprintf("cluster ID property %q, the cluster's id %q", property(p, multiclusterv1alpha1.PropertyClusterID), c.Spec.ID)
			case condition(p, multiclusterv1alpha1.ConditionControlPlaneHealthy) != "True" || condition(p, multiclusterv1alpha1.ConditionJoined) != "True":
				return fmt.Sprintf("conditions %v", p.Object["status"])
			case server != framework.Env.Host.Server+clusterv1alpha1.ProxyPath(cluster):
				return fmt.Sprintf("access providers %v, want one at %s", providers, framework.Env.Host.Server+clusterv1alpha1.ProxyPath(cluster))
			}
			return ""
		})
	}
	if _, err := framework.MemberClient(t, "member1").CoreV1().Namespaces().Get(t.Context(), names.InventoryNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member1 has the inventory namespace %s: %v, want NotFound", names.InventoryNamespace, err)
	}
	// Consumers of the access library's v0.2.0 read v1alpha2: the same
	// profile.
	v2 := multiclusterv1alpha1.ClusterProfiles.GroupResource().WithVersion("v1alpha2")
	p2, err := hostDynamic(t, nil).Resource(v2).Namespace(names.InventoryNamespace).Get(t.Context(), "member1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("member1's profile as v1alpha2: %v", err)
	}
	if p2.GetAPIVersion() != v2.GroupVersion().String() || condition(p2, multiclusterv1alpha1.ConditionControlPlaneHealthy) != "True" {
		t.Errorf("member1's profile as v1alpha2: %s, status %v", p2.GetAPIVersion(), p2.Object["status"])
	}
	// kubectl lists them with the printer columns.
	out, err := framework.Kubectl(t, "get", "clusterprofiles", "-n", names.InventoryNamespace)
	if err != nil {
		t.Fatalf("kubectl get clusterprofiles: %v\n%s", err, out)
	}
	t.Logf("kubectl get clusterprofiles -n %s:\n%s", names.InventoryNamespace, out)
}

// TestProfileFollowsHealth: member2's API server stopped, its profile's
// ControlPlaneHealthy turns False within the cluster-status interval (2 s
// here, with a 4 s failure threshold); started again, True.
func TestProfileFollowsHealth(t *testing.T) {
	waitProfile(t, "member2", time.Minute, healthy("True"))
	restart := framework.StopMember(t, "member2")
	start := time.Now()
	waitProfile(t, "member2", 30*time.Second, healthy("False"))
	t.Logf("member2's profile unhealthy %.1f s after its API server stopped", time.Since(start).Seconds())
	if err := restart(); err != nil {
		t.Fatal(err)
	}
	waitProfile(t, "member2", time.Minute, healthy("True"))
}

// TestUnjoinTakesProfileAndDecisions: unjoining member3 deletes its
// profile and drops it from the decisions of a workload placed there; a
// new join brings the profile back.
func TestUnjoinTakesProfileAndDecisions(t *testing.T) {
	t.Cleanup(func() { framework.Rejoin(t, "member3") })
	ns := framework.Namespace(t, "inventory-unjoin")
	placeWeb(t, ns, "member1", "member3")
	waitDecisions(t, ns, "web-deployment", "member1", "member3")

	e := framework.Env
	out, err := exec.CommandContext(t.Context(), filepath.Join(e.Options.BinDir, "flotillactl"), "unjoin", "member3",
		"--kubeconfig="+e.Host.Kubeconfig, "--cluster-kubeconfig="+framework.Member(t, "member3").Kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("flotillactl unjoin: %v\n%s", err, out)
	}
	waitProfile(t, "member3", 30*time.Second, func(_ *unstructured.Unstructured, err error) string {
		if !apierrors.IsNotFound(err) {
			return fmt.Sprintf("member3's ClusterProfile after unjoin: %v, want NotFound", err)
		}
		return ""
	})
	waitDecisions(t, ns, "web-deployment", "member1")

	framework.Rejoin(t, "member3")
	waitProfile(t, "member3", time.Minute, healthy("True"))
}
