package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"

	"github.com/flotilla-io/flotilla/agent/agentconfig"
	"github.com/flotilla-io/flotilla/controllers/agentregistration"
	"github.com/flotilla-io/flotilla/names"
)

func TestRotationBootstrapsStoreFromKubeconfig(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	now := time.Now()
	k1, k1PEM, k1Key := ca.issue(t, agentSubject(), now.Add(-time.Hour), now.Add(time.Hour))
	o := writeKubeconfig(t, dir, agentKubeconfig(t, "https://127.0.0.1:6443", ca.pem, k1PEM, k1Key))

	r, cfg := rotationFor(t, o)
	if r == nil {
		t.Fatal("no rotation for the agent's certificate")
	}
	if got := storeLeaf(t, r); got.SerialNumber.Cmp(k1.SerialNumber) != 0 {
		t.Fatalf("store holds serial %s, want the kubeconfig's %s", got.SerialNumber, k1.SerialNumber)
	}
	wantPath := filepath.Join(dir, defaultCertDirName, "flotilla-agent-"+testCluster+"-client-current.pem")
	if r.store.CurrentPath() != wantPath {
		t.Errorf("store path %s, want %s (default next to the kubeconfig)", r.store.CurrentPath(), wantPath)
	}
	if cfg.CertFile != wantPath || cfg.KeyFile != wantPath || cfg.CertData != nil || cfg.KeyData != nil {
		t.Errorf("rest.Config certificate: file %q key %q data %d/%d; want the store's file only", cfg.CertFile, cfg.KeyFile, len(cfg.CertData), len(cfg.KeyData))
	}
	if cfg.Dial == nil || string(cfg.CAData) != string(ca.pem) || cfg.Host != "https://127.0.0.1:6443" {
		t.Errorf("rest.Config: dial set %v, CA kept %v, host %s", cfg.Dial != nil, string(cfg.CAData) == string(ca.pem), cfg.Host)
	}
	if want := 2 * time.Hour; r.lifetime != want {
		t.Errorf("requested lifetime %s, want the registered certificate's %s", r.lifetime, want)
	}

	// A certificate renewed since (newer than the kubeconfig's) is kept on restart.
	_, s1PEM, s1Key := ca.issue(t, agentSubject(), now.Add(-time.Minute), now.Add(2*time.Hour))
	if _, err := r.store.FileStore.Update(s1PEM, s1Key); err != nil {
		t.Fatal(err)
	}
	s1 := storeLeaf(t, r)
	r, _ = rotationFor(t, o)
	if got := storeLeaf(t, r); got.SerialNumber.Cmp(s1.SerialNumber) != 0 {
		t.Fatalf("after restart the store holds serial %s, want the renewed %s", got.SerialNumber, s1.SerialNumber)
	}

	// A newer kubeconfig certificate (the cluster registered again) replaces it.
	k2, k2PEM, k2Key := ca.issue(t, agentSubject(), now, now.Add(time.Hour))
	o = writeKubeconfig(t, dir, agentKubeconfig(t, "https://127.0.0.1:6443", ca.pem, k2PEM, k2Key))
	r, _ = rotationFor(t, o)
	if got := storeLeaf(t, r); got.SerialNumber.Cmp(k2.SerialNumber) != 0 {
		t.Fatalf("after registering again the store holds serial %s, want the kubeconfig's %s", got.SerialNumber, k2.SerialNumber)
	}

	// An explicit --cert-dir is used.
	o.CertDir = filepath.Join(t.TempDir(), "certs")
	r, cfg = rotationFor(t, o)
	if !strings.HasPrefix(cfg.CertFile, o.CertDir+string(filepath.Separator)) || storeLeaf(t, r).SerialNumber.Cmp(k2.SerialNumber) != 0 {
		t.Errorf("with --cert-dir the certificate is read from %s", cfg.CertFile)
	}
}

func TestNoRotationWithoutAgentCertificate(t *testing.T) {
	ca := newTestCA(t)
	now := time.Now()

	t.Run("token", func(t *testing.T) {
		dir := t.TempDir()
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["cp"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthorityData: ca.pem}
		cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "abc"}
		cfg.Contexts["cp"] = &clientcmdapi.Context{Cluster: "cp", AuthInfo: "u"}
		cfg.CurrentContext = "cp"
		data, _ := clientcmd.Write(*cfg)
		o := writeKubeconfig(t, dir, data)
		cp, _ := clientcmd.BuildConfigFromFlags("", o.ControlPlaneKubeconfig)
		r, got, err := newCertRotation(o, cp)
		if err != nil || r != nil || got != cp {
			t.Fatalf("token kubeconfig: rotation %v, same config %v, err %v; want none, unchanged", r != nil, got == cp, err)
		}
		if _, err := os.Stat(filepath.Join(dir, defaultCertDirName)); !os.IsNotExist(err) {
			t.Errorf("the certificate directory was created without rotation: %v", err)
		}
	})
	t.Run("another identity", func(t *testing.T) {
		dir := t.TempDir()
		_, certPEM, keyPEM := ca.issue(t, pkix.Name{CommonName: "kubernetes-admin", Organization: []string{"system:masters"}}, now.Add(-time.Hour), now.Add(time.Hour))
		o := writeKubeconfig(t, dir, agentKubeconfig(t, "https://127.0.0.1:6443", ca.pem, certPEM, keyPEM))
		cp, _ := clientcmd.BuildConfigFromFlags("", o.ControlPlaneKubeconfig)
		r, got, err := newCertRotation(o, cp)
		if err != nil || r != nil || got != cp {
			t.Fatalf("admin kubeconfig: rotation %v, same config %v, err %v; want none, unchanged", r != nil, got == cp, err)
		}
		if _, err := os.Stat(filepath.Join(dir, defaultCertDirName)); !os.IsNotExist(err) {
			t.Errorf("the certificate directory was created without rotation: %v", err)
		}
	})
}

// clientCertServer is a TLS server requiring client certificates of ca; it
// answers the serial number of the certificate the client presented and
// counts connections.
func clientCertServer(t *testing.T, ca *testCA) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, r.TLS.PeerCertificates[0].SerialNumber.String())
	}))
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// tryPresented returns the serial of the certificate c presents to url.
func tryPresented(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, body)
	}
	return string(body), nil
}

func presented(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	got, err := tryPresented(c, url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return got
}

// The control-plane rest.Config presents the store's current certificate,
// also on the connections it held before a rotation (closed then), and so
// does a client built like the tunnel's (transport.TLSConfigFor + the
// configuration's dialer).
func TestRotatingConfigPresentsCurrentCertificate(t *testing.T) {
	old := connectionCloseDelay
	connectionCloseDelay = 1200 * time.Millisecond
	t.Cleanup(func() { connectionCloseDelay = old })

	ca := newTestCA(t)
	srv, conns := clientCertServer(t, ca)
	serverCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	now := time.Now()
	a, aPEM, aKey := ca.issue(t, agentSubject(), now.Add(-time.Hour), now.Add(time.Hour))
	o := writeKubeconfig(t, t.TempDir(), agentKubeconfig(t, srv.URL, serverCA, aPEM, aKey))
	r, cfg := rotationFor(t, o)
	if r == nil {
		t.Fatal("no rotation")
	}

	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := cfg.TransportConfig()
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig, err := transport.TLSConfigFor(tc)
	if err != nil {
		t.Fatal(err)
	}
	if tc.DialHolder == nil {
		t.Fatal("the configuration has no dialer for the tunnel to use")
	}
	tunnelLike := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, DialContext: tc.DialHolder.Dial}}

	for range 3 {
		if got := presented(t, client, srv.URL); got != a.SerialNumber.String() {
			t.Fatalf("presented serial %s, want %s", got, a.SerialNumber)
		}
	}
	if got := presented(t, tunnelLike, srv.URL); got != a.SerialNumber.String() {
		t.Fatalf("tunnel-like client presented serial %s, want %s", got, a.SerialNumber)
	}
	before := conns.Load()
	if before != 2 {
		t.Errorf("%d connections before the rotation, want 2 (kept alive)", before)
	}

	// The certificate manager stores a new certificate.
	b, bPEM, bKey := ca.issue(t, agentSubject(), now, now.Add(2*time.Hour))
	if _, err := r.store.Update(bPEM, bKey); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range []*http.Client{client, tunnelLike} {
		for {
			// A request in flight when the connections close fails.
			got, err := tryPresented(c, srv.URL)
			if got == b.SerialNumber.String() {
				break
			}
			if (err == nil && got != a.SerialNumber.String()) || time.Now().After(deadline) {
				t.Fatalf("presented serial %q (%v) after the rotation, want %s", got, err, b.SerialNumber)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if conns.Load() <= before {
		t.Errorf("no new connection after the rotation")
	}
	// Nothing presents the previous certificate any more.
	for range 3 {
		if got := presented(t, client, srv.URL); got != b.SerialNumber.String() {
			t.Fatalf("presented serial %s, want %s", got, b.SerialNumber)
		}
	}
}

// csrSigner answers the agent's certificate requests as the control plane
// does: approved (after checking agent-registration recognizes a renewal)
// and signed by ca.
type csrSigner struct {
	t        *testing.T
	ca       *testCA
	lifetime time.Duration

	mu       sync.Mutex
	requests []*certificatesv1.CertificateSigningRequest
	errs     []string
}

func (s *csrSigner) react(action clienttesting.Action) (bool, runtime.Object, error) {
	csr := action.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
	s.mu.Lock()
	defer s.mu.Unlock()
	if csr.Name == "" {
		csr.Name = fmt.Sprintf("%s%d", csr.GenerateName, len(s.requests))
	}
	csr.UID = types.UID(fmt.Sprintf("uid-%d", len(s.requests)))
	s.requests = append(s.requests, csr.DeepCopy())

	// What the API server fills in for a request made with the agent's certificate.
	asServer := csr.DeepCopy()
	asServer.Spec.Username = names.AgentUserName(testCluster)
	asServer.Spec.Groups = []string{names.AgentsGroup, "system:authenticated"}
	req, ours, err := agentregistration.Recognize(asServer)
	if !ours || err != nil || !req.Renewal || req.Cluster != testCluster || req.Subresource() != names.SubresourceSelfClusterAgent {
		s.errs = append(s.errs, fmt.Sprintf("agent-registration would not approve the renewal: ours %v, err %v, request %+v", ours, err, req))
		return false, nil, nil
	}
	block, _ := pem.Decode(csr.Spec.Request)
	x, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		s.errs = append(s.errs, err.Error())
		return false, nil, nil
	}
	now := time.Now()
	_, certPEM := s.ca.sign(s.t, x.Subject, x.PublicKey, now, now.Add(s.lifetime))
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: agentregistration.ReasonAutoApproved,
	}}
	csr.Status.Certificate = certPEM
	return false, nil, nil
}

// The certificate manager renews a certificate near its expiry through a
// CertificateSigningRequest the control plane approves as a renewal, with a
// client built from the current certificate; the new certificate goes to
// the store and the member's agent Secret.
func TestRotationRenewsThroughCertificateRequest(t *testing.T) {
	ca := newTestCA(t)
	now := time.Now()
	// 1h55m of its 2h lifetime gone: past the 70-90% rotation deadline.
	k, kPEM, kKey := ca.issue(t, agentSubject(), now.Add(-115*time.Minute), now.Add(5*time.Minute))
	kubeconfig := agentKubeconfig(t, "https://control-plane.example:6443", ca.pem, kPEM, kKey)
	o := writeKubeconfig(t, t.TempDir(), kubeconfig)
	r, _ := rotationFor(t, o)
	if r == nil {
		t.Fatal("no rotation")
	}

	signer := &csrSigner{t: t, ca: ca, lifetime: 2 * time.Hour}
	host := kubefake.NewClientset()
	host.PrependReactor("create", "certificatesigningrequests", signer.react)
	var clientCerts []string
	var clientMu sync.Mutex
	r.newClientset = func(cfg *rest.Config) (kubernetes.Interface, error) {
		leaf, err := leafOf(cfg.CertData)
		if err != nil {
			return nil, err
		}
		if _, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData); err != nil {
			return nil, err
		}
		clientMu.Lock()
		clientCerts = append(clientCerts, leaf.SerialNumber.String())
		clientMu.Unlock()
		return host, nil
	}
	member := kubefake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-system", Name: names.AgentConfigSecret,
			Annotations: map[string]string{names.AgentClusterAnnotation: testCluster}},
		Data: map[string][]byte{names.AgentConfigKey: kubeconfig},
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := r.start(ctx, member); err != nil {
		t.Fatal(err)
	}
	var renewed *x509.Certificate
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// Polled while the rotation writes the store: a read may find the
		// new file not yet complete; the next poll reads it whole.
		if cur, err := r.store.Current(); err == nil && cur.Leaf.SerialNumber.Cmp(k.SerialNumber) != 0 {
			renewed = cur.Leaf
			break
		}
		signer.mu.Lock()
		errs := slices.Clone(signer.errs)
		signer.mu.Unlock()
		if len(errs) > 0 || time.Now().After(deadline) {
			t.Fatalf("the certificate was not renewed: %v", errs)
		}
	}
	if !agentconfig.IsAgentCertificate(renewed, testCluster) || renewed.NotAfter.Before(now.Add(time.Hour)) {
		t.Errorf("renewed certificate %s until %s", renewed.Subject, renewed.NotAfter)
	}
	// The manager caches the certificate once the store's Update (and the
	// rotation's hook) returned: wait for it rather than race it.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if cur := r.current(); cur != nil && cur.Leaf.SerialNumber.Cmp(renewed.SerialNumber) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the manager does not hold the renewed certificate")
		}
	}

	signer.mu.Lock()
	csr := signer.requests[0]
	signer.mu.Unlock()
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		t.Errorf("signer %s", csr.Spec.SignerName)
	}
	wantUsages := []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment}
	if !slices.Equal(csr.Spec.Usages, wantUsages) {
		t.Errorf("usages %v, want %v", csr.Spec.Usages, wantUsages)
	}
	if csr.Spec.ExpirationSeconds == nil || *csr.Spec.ExpirationSeconds != int32((2*time.Hour).Seconds()) {
		t.Errorf("expirationSeconds %v, want the registered lifetime (7200)", csr.Spec.ExpirationSeconds)
	}
	clientMu.Lock()
	if len(clientCerts) == 0 || clientCerts[0] != k.SerialNumber.String() {
		t.Errorf("the request was made with certificates %v, want the current one %s", clientCerts, k.SerialNumber)
	}
	clientMu.Unlock()

	// The member's Secret holds the renewed certificate, the rest unchanged.
	s, err := member.CoreV1().Secrets("karmada-system").Get(ctx, names.AgentConfigSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(s.Data[names.AgentConfigKey])
	if err != nil {
		t.Fatal(err)
	}
	ai := kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo]
	got, err := leafOf(ai.ClientCertificateData)
	if err != nil || got.SerialNumber.Cmp(renewed.SerialNumber) != 0 {
		t.Errorf("the Secret holds serial %v (%v), want the renewed %s", got, err, renewed.SerialNumber)
	}
	if _, err := tls.X509KeyPair(ai.ClientCertificateData, ai.ClientKeyData); err != nil {
		t.Errorf("the Secret's certificate and key do not match: %v", err)
	}
	if cl := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]; cl.Server != "https://control-plane.example:6443" || string(cl.CertificateAuthorityData) != string(ca.pem) {
		t.Errorf("the Secret's cluster changed: %s", cl.Server)
	}
	if err := r.start(ctx, member); err == nil {
		t.Error("started twice")
	}
}

func TestOptionsCertFlags(t *testing.T) {
	o := NewOptions()
	if o.AgentNamespace != "karmada-system" || o.CertDir != "" {
		t.Fatalf("defaults: agent namespace %q, cert dir %q", o.AgentNamespace, o.CertDir)
	}
	o.ClusterName, o.ControlPlaneKubeconfig = testCluster, "x"
	o.AgentNamespace = "Not_A_Namespace"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--agent-namespace") {
		t.Errorf("invalid agent namespace accepted: %v", err)
	}
	o.AgentNamespace = ""
	if err := o.Validate(); err != nil {
		t.Errorf("empty agent namespace (no Secret updates) refused: %v", err)
	}
}

// A certificate renewed before a restart reaches the member's Secret when
// the agent starts, even when the Secret update failed at the time.
