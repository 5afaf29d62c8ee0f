package security

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/controllers/agentregistration"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// requestAgentCertificate posts, with a bootstrap token, the certificate
// request an attacker would: an agent identity for cluster, claiming the
// member id id. It returns the request's final condition.
func requestAgentCertificate(t *testing.T, token, cluster, id string) certificatesv1.CertificateSigningRequestCondition {
	t.Helper()
	ca, err := framework.Env.Host.CACert()
	if err != nil {
		t.Fatal(err)
	}
	return requestAs(t, &rest.Config{Host: framework.Env.Host.Server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, cluster, id)
}

// requestAs posts the agent certificate request of cluster as cfg's user.
func requestAs(t *testing.T, cfg *rest.Config, cluster, id string) certificatesv1.CertificateSigningRequestCondition {
	t.Helper()
	bootstrap := kubernetes.NewForConfigOrDie(cfg)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: names.AgentUserName(cluster), Organization: []string{names.AgentsGroup}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "attack-" + cluster + "-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	if id != "" {
		csr.Annotations = map[string]string{names.ClusterIDAnnotation: id}
	}
	created, err := bootstrap.CertificatesV1().CertificateSigningRequests().Create(t.Context(), csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the request: %v", err)
	}
	var cond certificatesv1.CertificateSigningRequestCondition
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		cur, err := bootstrap.CertificatesV1().CertificateSigningRequests().Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		for _, c := range cur.Status.Conditions {
			if c.Status == corev1.ConditionTrue {
				cond = c
				return ""
			}
		}
		return fmt.Sprintf("request %s undecided", created.Name)
	})
	return cond
}

// TestRegistrationReplay: a bootstrap token holder who knows a registered
// Pull cluster's id (anyone who may read Clusters does) asks for that
// cluster's agent certificate. It is denied, and so is a request without
// an id; an admin's one-time permission lets the member register again.
func TestRegistrationReplay(t *testing.T) {
	registeredMember3(t)
	admin := framework.Karmada(t).ClusterV1alpha1().Clusters()
	m3, err := admin.Get(t.Context(), "member3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m3.Spec.ID == "" {
		t.Fatal("member3 has no id")
	}
	token := newToken(t)

	cond := requestAgentCertificate(t, token, "member3", m3.Spec.ID)
	if cond.Type != certificatesv1.CertificateDenied || cond.Reason != agentregistration.ReasonRegistered ||
		!strings.Contains(cond.Message, "a control-plane admin must allow registering it again") {
		t.Errorf("replay with member3's id: %+v, want Denied %s", cond, agentregistration.ReasonRegistered)
	}
	cond = requestAgentCertificate(t, token, "member3", "")
	if cond.Type != certificatesv1.CertificateDenied || cond.Reason != agentregistration.ReasonInvalid {
		t.Errorf("request without an id: %+v, want Denied %s", cond, agentregistration.ReasonInvalid)
	}
	// A member re-registering with flotillactl register --force and no
	// admin rights gets the same answer, and its credentials stay.
	cmd := strings.Fields(newToken(t, "--print-register-command"))
	out, err := flotillactl(t, append(cmd[1:], "--cluster-name=member3", "--kubeconfig="+framework.Member(t, "member3").Kubeconfig, "--force", "--discovery-timeout=60s")...)
	if err == nil || !strings.Contains(out, "a control-plane admin must allow registering it again") {
		t.Errorf("register --force without admin rights: %v\n%s", err, out)
	}
	// With an admin's kubeconfig, --force registers the member again, once.
	out, err = flotillactl(t, append(cmd[1:], "--cluster-name=member3", "--kubeconfig="+framework.Member(t, "member3").Kubeconfig, "--force",
		"--discovery-timeout=60s", "--control-plane-kubeconfig="+framework.Env.Host.Kubeconfig)...)
	if err != nil {
		t.Fatalf("register --force with an admin's kubeconfig: %v\n%s", err, out)
	}
	m3, err = admin.Get(t.Context(), "member3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m3.Annotations[names.ReregisterAnnotation]; ok {
		t.Errorf("the admin's permission is still there after it was used: %v", m3.Annotations)
	}
	cond = requestAgentCertificate(t, token, "member3", m3.Spec.ID)
	if cond.Type != certificatesv1.CertificateDenied {
		t.Errorf("replay after the admin's permission was used: %+v, want Denied", cond)
	}
	// The certificate issued before the new registration is not renewed:
	// the control plane only renews what it issued since.
	old, err := clientcmd.BuildConfigFromFlags("", registeredMember3(t))
	if err != nil {
		t.Fatal(err)
	}
	cond = requestAs(t, old, "member3", "")
	if cond.Type != certificatesv1.CertificateDenied || cond.Reason != agentregistration.ReasonUnknownCertificate {
		t.Errorf("renewal with the certificate of the earlier registration: %+v, want Denied %s", cond, agentregistration.ReasonUnknownCertificate)
	}
}

// TestTokenLimits: a token bound to one name registers only that name;
// an unbound token registers at most --max-clusters-per-token (1 here).
func TestTokenLimits(t *testing.T) {
	admin := framework.Karmada(t).ClusterV1alpha1().Clusters()
	cleanup := func(names ...string) {
		t.Cleanup(func() {
			for _, n := range names {
				if err := admin.Delete(context.Background(), n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("deleting cluster %s: %v", n, err)
				}
			}
		})
	}
	cleanup("edge-bound", "edge-other", "edge-a", "edge-b")

	bound := newToken(t, "--cluster-name=edge-bound")
	cond := requestAgentCertificate(t, bound, "edge-other", "id-edge-other")
	if cond.Type != certificatesv1.CertificateDenied || !strings.Contains(cond.Message, "this bootstrap token may register only cluster edge-bound, not edge-other") {
		t.Errorf("bound token, other name: %+v", cond)
	}
	if _, err := admin.Get(t.Context(), "edge-other", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster edge-other exists after a denied request: %v", err)
	}
	if cond := requestAgentCertificate(t, bound, "edge-bound", "id-edge-bound"); cond.Type != certificatesv1.CertificateApproved {
		t.Errorf("bound token, its name: %+v, want Approved", cond)
	}

	unbound := newToken(t)
	if cond := requestAgentCertificate(t, unbound, "edge-a", "id-edge-a"); cond.Type != certificatesv1.CertificateApproved {
		t.Fatalf("unbound token, first cluster: %+v, want Approved", cond)
	}
	cond = requestAgentCertificate(t, unbound, "edge-b", "id-edge-b")
	if cond.Type != certificatesv1.CertificateDenied || cond.Reason != agentregistration.ReasonTokenExhausted {
		t.Errorf("unbound token, second cluster: %+v, want Denied %s", cond, agentregistration.ReasonTokenExhausted)
	}
	if _, err := admin.Get(t.Context(), "edge-b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster edge-b exists after a denied request: %v", err)
	}
}
