package pull

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// agentCertificate reads the agent's current control-plane certificate
// from its certificate directory.
func agentCertificate(t *testing.T) *x509.Certificate {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(agentKubeconfig), "flotilla-agent-certs", "flotilla-agent-member3-client-current.pem"))
	if err != nil {
		t.Fatal(err)
	}
	for block, rest := pem.Decode(raw); block != nil; block, rest = pem.Decode(rest) {
		if block.Type == "CERTIFICATE" {
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return cert
		}
	}
	t.Fatal("no certificate in the agent's store")
	return nil
}

// TestAgentRenewsCertificate: the agent renews its
// control-plane certificate with a CSR of its own identity, which the
// control plane approves and signs; afterwards it keeps working (a new
// template reaches member3, the tunnel serves the proxy). SIGUSR1 asks for
// the renewal now instead of at 70–90% of the certificate's life.
func TestAgentRenewsCertificate(t *testing.T) {
	p := pullMember(t)
	before := agentCertificate(t)
	if err := syscall.Kill(p.PID, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var after *x509.Certificate
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		after = agentCertificate(t)
		if after.SerialNumber.Cmp(before.SerialNumber) == 0 {
			return "the agent still holds its registration certificate"
		}
		return ""
	})
	if after.Subject.CommonName != "system:karmada:agent:member3" || !after.NotAfter.After(before.NotAfter) {
		t.Errorf("renewed certificate %s valid until %s, was until %s", after.Subject, after.NotAfter, before.NotAfter)
	}
	ns := framework.Namespace(t, "pull-renewed")
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: after-renewal, namespace: %[1]s}
data: {k: v}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: after-renewal, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: after-renewal}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`, ns))
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		if _, err := framework.MemberClient(t, "member3").CoreV1().ConfigMaps(ns).Get(ctx, "after-renewal", metav1.GetOptions{}); err != nil {
			return "after the renewal: " + err.Error()
		}
		// The tunnel came back with the new certificate.
		var list corev1.NamespaceList
		if err := framework.HostClient(t).CoreV1().RESTClient().Get().
			AbsPath("/apis/cluster.karmada.io/v1alpha1/clusters/member3/proxy/api/v1/namespaces").Do(ctx).Into(&list); err != nil {
			return "proxy through the tunnel after the renewal: " + err.Error()
		}
		return ""
	})
	waitReady(t, metav1.ConditionTrue)
}
