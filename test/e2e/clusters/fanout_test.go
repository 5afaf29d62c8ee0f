package clusters

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// clusters/*/proxy: a list spans every member; a named object is found in
// the one member holding it, and is a conflict when several do.
func TestProxyFanOut(t *testing.T) {
	ctx := t.Context()
	host, err := framework.Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	rc := host.CoreV1().RESTClient()
	raw, err := rc.Get().AbsPath(proxyPrefix + "*/proxy/api/v1/nodes").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var nodes corev1.NodeList
	if err := json.Unmarshal(raw, &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 4 {
		t.Errorf("listed %d nodes across member1 and member2, want 4", len(nodes.Items))
	}

	m1, err := framework.Member(t, "member1").Client()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m1.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-member1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	raw, err = rc.Get().AbsPath(proxyPrefix + "*/proxy/api/v1/namespaces/default/configmaps/only-in-member1").DoRaw(ctx)
	if err != nil {
		t.Fatalf("named object in one member: %v %s", err, raw)
	}
	_, err = rc.Get().AbsPath(proxyPrefix + "*/proxy/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt").DoRaw(ctx)
	if !apierrors.IsConflict(err) {
		t.Errorf("object in both members: got %v, want Conflict", err)
	}
	// A non-resource path is answered by the control plane itself.
	raw, err = rc.Get().AbsPath(proxyPrefix + "*/proxy/version").DoRaw(ctx)
	var version struct {
		GitVersion string `json:"gitVersion"`
	}
	if err != nil || json.Unmarshal(raw, &version) != nil || version.GitVersion != "v1.36.3" {
		t.Errorf("/version through clusters/*/proxy: %v %s", err, raw)
	}
	_, err = rc.Get().AbsPath(proxyPrefix + "*/proxy/api/v1/namespaces/default/configmaps/nowhere").DoRaw(ctx)
	if !apierrors.IsNotFound(err) {
		t.Errorf("object in no member: got %v, want NotFound", err)
	}
}
