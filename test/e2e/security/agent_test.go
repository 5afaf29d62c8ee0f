package security

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// listener accepts and counts connections on a loopback port: the
// attacker's endpoint.
func listener(t *testing.T) (addr string, accepted *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() }) // best effort: the test is over
	accepted = &atomic.Int64{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close() // only the connection attempt is counted
		}
	}()
	return l.Addr().String(), accepted
}

// TestAgentCannotRedirectItsCluster: the agent identity of member3 tries
// to turn its Cluster into a Push cluster pointing at the attacker's
// address with member1's credential Secret, so that the control plane
// would send member1's token there. Every field is refused by name,
// nothing changes, and the attacker's listener is never reached.
func TestAgentCannotRedirectItsCluster(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", registeredMember3(t))
	if err != nil {
		t.Fatal(err)
	}
	agent := versioned.NewForConfigOrDie(cfg)
	admin := framework.Karmada(t)
	addr, accepted := listener(t)
	before, err := admin.ClusterV1alpha1().Clusters().Get(t.Context(), "member3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	attacks := map[string]map[string]any{
		"redirect": {"spec": map[string]any{
			"syncMode": "Push", "apiEndpoint": "https://" + addr, "insecureSkipTLSVerification": true,
			"secretRef": map[string]string{"namespace": names.SecretNamespace, "name": "member1"},
		}},
		"impersonator": {"spec": map[string]any{"impersonatorSecretRef": map[string]string{"namespace": names.SecretNamespace, "name": "member1-impersonator"}}},
		"proxy":        {"spec": map[string]any{"proxyURL": "http://" + addr, "proxyHeader": map[string]string{"X-A": "b"}}},
		"taint":        {"spec": map[string]any{"taints": []any{map[string]string{"key": "attacker", "effect": "NoSchedule"}}}},
		"label":        {"metadata": map[string]any{"labels": map[string]string{"tier": "trusted"}}},
	}
	wantFields := map[string][]string{
		"redirect":     {"spec.syncMode", "spec.apiEndpoint", "spec.insecureSkipTLSVerification", "spec.secretRef"},
		"impersonator": {"spec.impersonatorSecretRef"},
		"proxy":        {"spec.proxyURL", "spec.proxyHeader"},
		"taint":        {"spec.taints"},
		"label":        {"metadata.labels"},
	}
	for name, patch := range attacks {
		data, _ := json.Marshal(patch)
		_, err := agent.ClusterV1alpha1().Clusters().Patch(t.Context(), "member3", types.MergePatchType, data, metav1.PatchOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v, want Invalid", name, err)
			continue
		}
		for _, f := range wantFields[name] {
			if !strings.Contains(err.Error(), f+": Forbidden") {
				t.Errorf("%s: %v does not name %s", name, err, f)
			}
		}
	}
	// The same through the status subresource changes no metadata either.
	_, err = agent.ClusterV1alpha1().Clusters().Patch(t.Context(), "member3", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"tier":"trusted"}}}`), metav1.PatchOptions{}, "status")
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.labels: Forbidden") {
		t.Errorf("labels through status: %v, want Invalid naming metadata.labels", err)
	}
	// The agent still reports what an agent reports.
	if _, err := agent.ClusterV1alpha1().Clusters().Patch(t.Context(), "member3", types.MergePatchType,
		[]byte(`{"spec":{"region":"edge"}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("the agent may not report its region: %v", err)
	}

	// Three status intervals (2s): a control plane that had taken the
	// patch would have probed the attacker's endpoint by now.
	time.Sleep(6 * time.Second)
	if n := accepted.Load(); n != 0 {
		t.Errorf("the attacker's listener got %d connection(s)", n)
	}
	after, err := admin.ClusterV1alpha1().Clusters().Get(t.Context(), "member3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after.Spec.Region = before.Spec.Region
	if !apiequality.Semantic.DeepEqual(after.Spec, before.Spec) || !apiequality.Semantic.DeepEqual(after.Labels, before.Labels) {
		t.Errorf("member3 changed:\nbefore %+v %v\nafter  %+v %v", before.Spec, before.Labels, after.Spec, after.Labels)
	}
}

// TestSecretRefConfined: nobody, admins included, can point a Cluster at a
// Secret outside karmada-cluster, and syncMode cannot change.
func TestSecretRefConfined(t *testing.T) {
	clusters := framework.Karmada(t).ClusterV1alpha1().Clusters()
	addr, accepted := listener(t)
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "stolen"}, Spec: clusterv1alpha1.ClusterSpec{
		SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://" + addr, InsecureSkipTLSVerification: true,
		SecretRef:             &clusterv1alpha1.LocalSecretReference{Namespace: "kube-system", Name: "bootstrap-token-abcdef"},
		ImpersonatorSecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "default", Name: "x"},
	}}
	_, err := clusters.Create(t.Context(), c, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.secretRef.namespace: Unsupported value: "kube-system": supported values: "karmada-cluster"`) ||
		!strings.Contains(err.Error(), "spec.impersonatorSecretRef.namespace") {
		t.Errorf("create: %v, want Invalid naming both namespaces", err)
	}
	if _, err := clusters.Get(t.Context(), "stolen", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused cluster exists: %v", err)
	}
	_, err = clusters.Patch(t.Context(), "member1", types.MergePatchType, []byte(`{"spec":{"syncMode":"Pull"}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.syncMode") || !strings.Contains(err.Error(), "field is immutable") {
		t.Errorf("syncMode change: %v, want Invalid: field is immutable", err)
	}
	time.Sleep(2 * time.Second)
	if n := accepted.Load(); n != 0 {
		t.Errorf("the listener got %d connection(s)", n)
	}
	// member1 still works as before.
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		m1, err := clusters.Get(ctx, "member1", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if m1.Spec.SyncMode != clusterv1alpha1.Push {
			return "member1 syncMode " + string(m1.Spec.SyncMode)
		}
		return ""
	})
}
