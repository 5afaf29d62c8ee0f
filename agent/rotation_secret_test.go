package agent

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	"github.com/flotilla-io/flotilla/agent/agentconfig"
	"github.com/flotilla-io/flotilla/names"
)

func TestUpdateAgentSecret(t *testing.T) {
	ca := newTestCA(t)
	now := time.Now()
	_, oldPEM, oldKey := ca.issue(t, agentSubject(), now.Add(-time.Hour), now.Add(time.Hour))
	cur, curPEM, curKey := ca.issue(t, agentSubject(), now, now.Add(2*time.Hour))
	_, newerPEM, newerKey := ca.issue(t, agentSubject(), now.Add(time.Minute), now.Add(2*time.Hour))
	_, adminPEM, adminKey := ca.issue(t, pkix.Name{CommonName: "kubernetes-admin"}, now, now.Add(time.Hour))
	secret := func(annotation string, kubeconfig []byte) *corev1.Secret {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-system", Name: names.AgentConfigSecret},
			Data:       map[string][]byte{names.AgentConfigKey: kubeconfig},
		}
		if annotation != "" {
			s.Annotations = map[string]string{names.AgentClusterAnnotation: annotation}
		}
		return s
	}
	kc := func(certPEM, keyPEM []byte) []byte {
		return agentKubeconfig(t, "https://cp:6443", ca.pem, certPEM, keyPEM)
	}
	for _, tc := range []struct {
		name   string
		secret *corev1.Secret
		want   agentconfig.Outcome
	}{
		{"absent", nil, agentconfig.Absent},
		{"older certificate", secret(testCluster, kc(oldPEM, oldKey)), agentconfig.Updated},
		{"older certificate, no annotation", secret("", kc(oldPEM, oldKey)), agentconfig.Updated},
		{"same certificate", secret(testCluster, kc(curPEM, curKey)), agentconfig.UpToDate},
		{"newer certificate", secret(testCluster, kc(newerPEM, newerKey)), agentconfig.Newer},
		{"another cluster", secret("member1", kc(oldPEM, oldKey)), agentconfig.Foreign},
		{"another identity", secret(testCluster, kc(adminPEM, adminKey)), agentconfig.Foreign},
		{"not a kubeconfig", secret(testCluster, []byte("{{{")), agentconfig.Unreadable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			member := kubefake.NewClientset()
			var before []byte
			if tc.secret != nil {
				before = tc.secret.Data[names.AgentConfigKey]
				member = kubefake.NewClientset(tc.secret)
			}
			got, err := agentconfig.UpdateCertificate(context.Background(), member, "karmada-system", testCluster, curPEM, curKey, cur)
			if err != nil || got != tc.want {
				t.Fatalf("outcome %q, %v; want %q", got, err, tc.want)
			}
			if tc.secret == nil {
				return
			}
			s, _ := member.CoreV1().Secrets("karmada-system").Get(context.Background(), names.AgentConfigSecret, metav1.GetOptions{})
			after := s.Data[names.AgentConfigKey]
			if changed := string(after) != string(before); changed != (tc.want == agentconfig.Updated) {
				t.Fatalf("Secret changed: %v", changed)
			}
			if tc.want == agentconfig.Updated {
				cfg, err := clientcmd.Load(after)
				if err != nil {
					t.Fatal(err)
				}
				ai := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
				if string(ai.ClientCertificateData) != string(curPEM) || string(ai.ClientKeyData) != string(curKey) {
					t.Error("the Secret does not hold the current certificate and key")
				}
			}
		})
	}
}

func TestStartCatchesUpTheSecret(t *testing.T) {
	ca := newTestCA(t)
	now := time.Now()
	_, kPEM, kKey := ca.issue(t, agentSubject(), now.Add(-time.Hour), now.Add(time.Hour))
	kubeconfig := agentKubeconfig(t, "https://cp:6443", ca.pem, kPEM, kKey)
	o := writeKubeconfig(t, t.TempDir(), kubeconfig)
	r, _ := rotationFor(t, o)
	_, sPEM, sKey := ca.issue(t, agentSubject(), now.Add(-time.Minute), now.Add(2*time.Hour))
	if _, err := r.store.FileStore.Update(sPEM, sKey); err != nil {
		t.Fatal(err)
	}
	r, _ = rotationFor(t, o)
	renewed := storeLeaf(t, r)
	r.newClientset = func(*rest.Config) (kubernetes.Interface, error) { return kubefake.NewClientset(), nil }
	member := kubefake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-system", Name: names.AgentConfigSecret},
		Data:       map[string][]byte{names.AgentConfigKey: kubeconfig},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := r.start(ctx, member); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		s, err := member.CoreV1().Secrets("karmada-system").Get(ctx, names.AgentConfigSecret, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kc, err := clientcmd.Load(s.Data[names.AgentConfigKey])
		if err != nil {
			t.Fatal(err)
		}
		if held, err := leafOf(kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo].ClientCertificateData); err == nil && held.SerialNumber.Cmp(renewed.SerialNumber) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the Secret does not hold the renewed certificate")
		}
	}
}

// leafOf parses the first certificate of a PEM bundle.
func leafOf(certPEM []byte) (*x509.Certificate, error) {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}
