package pull

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
)

// TestAgentLeastPrivilege: member3's agent identity reaches its own
// Cluster, Works and Lease, and is refused member1's Cluster and Works,
// the Clusters list and the control plane's Secrets.
func TestAgentLeastPrivilege(t *testing.T) {
	pullMember(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", agentKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	karmada := versioned.NewForConfigOrDie(cfg)
	host := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	if _, err := karmada.ClusterV1alpha1().Clusters().Get(ctx, "member3", metav1.GetOptions{}); err != nil {
		t.Errorf("the agent cannot read its own Cluster: %v", err)
	}
	if _, err := karmada.WorkV1alpha1().Works("karmada-es-member3").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the agent cannot list its own Works: %v", err)
	}
	refused := map[string]error{}
	_, refused["member1's Cluster"] = karmada.ClusterV1alpha1().Clusters().Get(ctx, "member1", metav1.GetOptions{})
	_, refused["patching member1's status"] = karmada.ClusterV1alpha1().Clusters().Patch(ctx, "member1", types.MergePatchType,
		[]byte(`{"status":{"kubernetesVersion":"v0"}}`), metav1.PatchOptions{}, "status")
	_, refused["all Clusters"] = karmada.ClusterV1alpha1().Clusters().List(ctx, metav1.ListOptions{})
	_, refused["member1's Works"] = karmada.WorkV1alpha1().Works("karmada-es-member1").List(ctx, metav1.ListOptions{})
	_, refused["Secrets"] = host.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	_, refused["bindings"] = karmada.WorkV1alpha2().ResourceBindings("default").List(ctx, metav1.ListOptions{})
	for what, err := range refused {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", what, err)
		}
	}
}
