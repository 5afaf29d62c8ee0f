package agent

// Rotation of the agent's control-plane client certificate before it
// expires.
//
// flotillactl register issues the agent a client certificate for
// system:karmada:agent:<cluster> (group system:karmada:agents) and embeds it
// in the agent's kubeconfig. The agent renews it as the kubelet renews its
// own: client-go's certificate manager (k8s.io/client-go/util/certificate)
// posts, at 70-90% of the certificate's lifetime, a new
// CertificateSigningRequest for the same subject with the agent's own
// identity, which the control plane's agent-registration controller
// approves as a renewal (requester = the CN, certificatesigningrequests/
// selfclusteragent), and stores the signed certificate in a file store
// (--cert-dir).
//
// The control-plane rest.Config reads its client certificate from the
// store's current file (CertFile = KeyFile = <cert-dir>/...-current.pem):
// client-go reloads such files for every new TLS connection, and so does the
// tunnel, which builds its TLS configuration from the same rest.Config. The
// rest.Config dials through a connrotation.Dialer whose connections are all
// closed once a new certificate is stored, so that long-lived connections
// (HTTP/2, watches, the tunnel) are re-established with the new certificate
// before the old one expires.
//
// A kubeconfig without a client certificate (a token), or with the
// certificate of another identity than the cluster's agent (an admin
// kubeconfig in tests), is used as is: no rotation.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/agent/agentconfig"
	"github.com/flotilla-io/flotilla/names"
)

const (
	// defaultCertDirName is the default --cert-dir, next to the
	// control-plane kubeconfig.
	defaultCertDirName = "flotilla-agent-certs"
	// minCertificateLifetime is the shortest expirationSeconds the
	// CertificateSigningRequest API accepts.
	minCertificateLifetime = 10 * time.Minute
	// secretUpdateTimeout bounds the update of the member's agent Secret
	// after a rotation.
	secretUpdateTimeout = 30 * time.Second
)

// connectionCloseDelay is how long after a new certificate is stored the
// control-plane connections are closed: client-go caches the certificate
// file it reads for a second, so a connection opened sooner could still
// present the previous certificate. A variable for tests.
var connectionCloseDelay = 2 * time.Second

// certRotation renews the agent's control-plane client certificate.
type certRotation struct {
	cluster string
	// base is the control-plane configuration without a client
	// certificate: the certificate manager's clients add the current one.
	base *rest.Config
	// store holds the current certificate; its file is the rest.Config's.
	store *notifyingStore
	// dialer dials the rest.Config's connections; closed on rotation.
	dialer *connrotation.Dialer
	// lifetime is requested for every new certificate: the registered one's.
	lifetime time.Duration
	// secretNamespace holds the member Secret AgentConfigSecret that is
	// updated with each new certificate; empty: not updated.
	secretNamespace string

	mu sync.Mutex
	// ctx and member are set by start.
	ctx    context.Context
	member kubernetes.Interface
	// manager runs once started.
	manager certificate.Manager
	// newClientset builds the certificate manager's clients; nil:
	// kubernetes.NewForConfig. Tests replace it.
	newClientset func(*rest.Config) (kubernetes.Interface, error)
}

// notifyingStore is a certificate file store that tells the rotation when
// the certificate manager stores a new certificate.
type notifyingStore struct {
	certificate.FileStore
	onUpdate func(certPEM, keyPEM []byte, cert *tls.Certificate)
}

// Update stores a new certificate and notifies.
func (s *notifyingStore) Update(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	cert, err := s.FileStore.Update(certPEM, keyPEM)
	if err == nil && s.onUpdate != nil {
		s.onUpdate(certPEM, keyPEM, cert)
	}
	return cert, err
}

// newCertRotation prepares the rotation of cp's client certificate and
// returns the rest.Config to use: cp itself, and a nil rotation, when cp
// has no client certificate of the agent of o.ClusterName. Otherwise the
// store in the certificate directory is created, or brought up to date
// with the kubeconfig's certificate when that one is newer (a new
// registration), and the returned rest.Config reads its certificate from
// the store and dials through the rotation's dialer.
func newCertRotation(o *Options, cp *rest.Config) (*certRotation, *rest.Config, error) {
	logger := klog.Background().WithValues("cluster", o.ClusterName)
	certPEM, keyPEM, err := clientCertificateOf(cp)
	if err != nil {
		return nil, nil, fmt.Errorf("control-plane kubeconfig: %w", err)
	}
	if certPEM == nil {
		logger.V(1).Info("The control-plane kubeconfig has no client certificate: no certificate rotation")
		return nil, cp, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("control-plane kubeconfig: client certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, fmt.Errorf("control-plane kubeconfig: client certificate: %w", err)
	}
	if !agentconfig.IsAgentCertificate(leaf, o.ClusterName) {
		logger.Info("The control-plane client certificate is not the agent's (flotillactl register issues it): no certificate rotation",
			"subject", leaf.Subject.String(), "agent", names.AgentUserName(o.ClusterName))
		return nil, cp, nil
	}

	dir, err := certDir(o)
	if err != nil {
		return nil, nil, err
	}
	files, err := certificate.NewFileStoreWithLogger(logger.V(2), "flotilla-agent-"+o.ClusterName+"-client", dir, dir, "", "")
	if err != nil {
		return nil, nil, fmt.Errorf("certificate store in %s: %w", dir, err)
	}
	current, err := bootstrapStore(logger, files, o.ClusterName, certPEM, keyPEM, leaf)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate store in %s: %w", dir, err)
	}
	if time.Now().After(current.NotAfter) {
		logger.Error(nil, "The agent's client certificate has expired and cannot be renewed: register the cluster again (flotillactl register --force)",
			"notAfter", current.NotAfter)
	}

	base := rest.CopyConfig(cp)
	base.CertData, base.KeyData, base.CertFile, base.KeyFile = nil, nil, "", ""
	dial := cp.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	r := &certRotation{
		cluster:         o.ClusterName,
		base:            base,
		dialer:          connrotation.NewDialer(dial),
		lifetime:        max(current.NotAfter.Sub(current.NotBefore).Truncate(time.Second), minCertificateLifetime),
		secretNamespace: o.AgentNamespace,
	}
	r.store = &notifyingStore{FileStore: files, onUpdate: r.rotated}

	rotating := rest.CopyConfig(cp)
	rotating.CertData, rotating.KeyData = nil, nil
	rotating.CertFile, rotating.KeyFile = files.CurrentPath(), files.CurrentPath()
	rotating.Dial = r.dialer.DialContext
	logger.Info("The agent's client certificate will be renewed before it expires", "certDir", dir, "notAfter", current.NotAfter)
	return r, rotating, nil
}

// clientCertificateOf returns the client certificate and key of cfg, from
// its data or its files; nil without a certificate.
func clientCertificateOf(cfg *rest.Config) (certPEM, keyPEM []byte, err error) {
	certPEM, keyPEM = cfg.CertData, cfg.KeyData
	if len(certPEM) == 0 && cfg.CertFile != "" {
		if certPEM, err = os.ReadFile(cfg.CertFile); err != nil {
			return nil, nil, fmt.Errorf("reading the client certificate: %w", err)
		}
	}
	if len(keyPEM) == 0 && cfg.KeyFile != "" {
		if keyPEM, err = os.ReadFile(cfg.KeyFile); err != nil {
			return nil, nil, fmt.Errorf("reading the client key: %w", err)
		}
	}
	if len(certPEM) == 0 {
		return nil, nil, nil
	}
	if len(keyPEM) == 0 {
		return nil, nil, errors.New("a client certificate without a key")
	}
	return certPEM, keyPEM, nil
}

// certDir is --cert-dir, by default next to the control-plane kubeconfig,
// created if missing.
func certDir(o *Options) (string, error) {
	dir := o.CertDir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(o.ControlPlaneKubeconfig), defaultCertDirName)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		hint := ""
		if o.CertDir == "" {
			hint = " (set --cert-dir to a writable directory)"
		}
		return "", fmt.Errorf("creating the certificate directory %s%s: %w", dir, hint, err)
	}
	return dir, nil
}

// bootstrapStore makes the store hold the agent's certificate and returns
// it: the kubeconfig's (kubeCert) when the store has none, holds another
// identity's, an expired one, or one older than the kubeconfig's (the
// cluster was registered again); otherwise the store's, renewed since the
// kubeconfig was written.
func bootstrapStore(logger klog.Logger, store certificate.FileStore, cluster string, kubeCertPEM, kubeKeyPEM []byte, kubeCert *x509.Certificate) (*x509.Certificate, error) {
	held, err := store.Current()
	var noCert *certificate.NoCertKeyError
	switch {
	case errors.As(err, &noCert):
		held = nil
	case err != nil:
		// An unreadable store is replaced rather than fatal.
		logger.Error(err, "The certificate store cannot be read; starting it again from the kubeconfig")
		held = nil
	}
	if held != nil && held.Leaf != nil {
		leaf := held.Leaf
		switch {
		case bytes.Equal(leaf.Raw, kubeCert.Raw):
			return leaf, nil
		case agentconfig.IsAgentCertificate(leaf, cluster) && time.Now().Before(leaf.NotAfter) && !kubeCert.NotBefore.After(leaf.NotBefore):
			logger.V(1).Info("Using the renewed client certificate of the certificate store", "notAfter", leaf.NotAfter)
			return leaf, nil
		}
	}
	if _, err := store.Update(kubeCertPEM, kubeKeyPEM); err != nil {
		return nil, err
	}
	logger.V(1).Info("Certificate store initialized with the kubeconfig's client certificate", "notAfter", kubeCert.NotAfter)
	return kubeCert, nil
}

// start runs the certificate manager until ctx ends. member, when not nil,
// is where the agent Secret is kept up to date.
func (r *certRotation) start(ctx context.Context, member kubernetes.Interface) error {
	r.mu.Lock()
	if r.manager != nil {
		r.mu.Unlock()
		return errors.New("certificate rotation already started")
	}
	r.ctx, r.member = ctx, member
	r.mu.Unlock()
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn: r.clientset,
		Template: &x509.CertificateRequest{Subject: pkix.Name{
			CommonName: names.AgentUserName(r.cluster), Organization: []string{names.AgentsGroup},
		}},
		Usages: []certificatesv1.KeyUsage{
			certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment,
		},
		SignerName:                   certificatesv1.KubeAPIServerClientSignerName,
		RequestedCertificateLifetime: &r.lifetime,
		CertificateStore:             r.store,
		Name:                         "agent-client-certificate",
		Ctx:                          &ctx,
	})
	if err != nil {
		return fmt.Errorf("certificate rotation: %w", err)
	}
	r.mu.Lock()
	r.manager = m
	r.mu.Unlock()
	// The Secret may lag behind a certificate renewed before a restart.
	if cur, err := r.store.Current(); err == nil {
		if certPEM, keyPEM, err := encodePair(cur); err == nil {
			go r.updateSecret(certPEM, keyPEM, cur.Leaf)
		}
	}
	m.Start()
	return nil
}

// current is the certificate the manager holds; nil before start or once expired.
func (r *certRotation) current() *tls.Certificate {
	r.mu.Lock()
	m := r.manager
	r.mu.Unlock()
	if m == nil {
		return nil
	}
	return m.Current()
}

// clientset is the certificate manager's client: the control plane with the
// current certificate.
func (r *certRotation) clientset(current *tls.Certificate) (kubernetes.Interface, error) {
	if current == nil {
		return nil, fmt.Errorf("the agent of cluster %s holds no valid client certificate to request the next one with (it expired): register the cluster again (flotillactl register --force)", r.cluster)
	}
	certPEM, keyPEM, err := encodePair(current)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(r.base)
	cfg.CertData, cfg.KeyData = certPEM, keyPEM
	if r.newClientset != nil {
		return r.newClientset(cfg)
	}
	return kubernetes.NewForConfig(cfg)
}

// encodePair returns a certificate's chain and key in PEM.
func encodePair(cert *tls.Certificate) (certPEM, keyPEM []byte, err error) {
	if cert == nil || len(cert.Certificate) == 0 || cert.PrivateKey == nil {
		return nil, nil, errors.New("no certificate")
	}
	for _, der := range cert.Certificate {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the client key: %w", err)
	}
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// rotated runs when the certificate manager stored a new certificate:
// connections are closed so that new ones present it, and the member's
// agent Secret gets it.
func (r *certRotation) rotated(certPEM, keyPEM []byte, cert *tls.Certificate) {
	r.mu.Lock()
	ctx := r.ctx
	r.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	leaf := cert.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			klog.FromContext(ctx).Error(err, "Parsing the renewed client certificate")
			return
		}
	}
	klog.FromContext(ctx).Info("Client certificate renewed; reconnecting to the control plane with it",
		"cluster", r.cluster, "serial", leaf.SerialNumber.String(), "notAfter", leaf.NotAfter)
	time.AfterFunc(connectionCloseDelay, r.dialer.CloseAll)
	r.updateSecret(certPEM, keyPEM, leaf)
}

// updateSecret writes the certificate into the member's agent Secret, best
// effort: a failure is logged, the agent runs on.
func (r *certRotation) updateSecret(certPEM, keyPEM []byte, leaf *x509.Certificate) {
	r.mu.Lock()
	ctx, member := r.ctx, r.member
	r.mu.Unlock()
	if member == nil || r.secretNamespace == "" || leaf == nil {
		return
	}
	logger := klog.FromContext(ctx).WithValues("secret", klog.KRef(r.secretNamespace, names.AgentConfigSecret))
	ctx, cancel := context.WithTimeout(ctx, secretUpdateTimeout)
	defer cancel()
	outcome, err := agentconfig.UpdateCertificate(ctx, member, r.secretNamespace, r.cluster, certPEM, keyPEM, leaf)
	if err != nil {
		logger.Error(err, "The agent's kubeconfig Secret in the member could not be updated with the renewed client certificate; a restarted agent may start from an older certificate")
		return
	}
	logger.V(1).Info("Agent kubeconfig Secret", "outcome", string(outcome))
}

// renewOnSignal renews the certificate now whenever sig arrives (SIGUSR1 in
// flotilla-agent): an operator's way to roll the identity, say after the
// control plane's signing CA changed, without waiting for the deadline.
func (r *certRotation) renewOnSignal(ctx context.Context, sigs <-chan os.Signal) {
	logger := klog.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sigs:
			r.mu.Lock()
			m := r.manager
			r.mu.Unlock()
			// client-go's manager renews at once through RotateCerts, the
			// entry its own tests use; the interface does not list it.
			now, ok := m.(interface{ RotateCerts() (bool, error) })
			if !ok {
				logger.Info("This certificate manager cannot renew on demand")
				continue
			}
			if renewed, err := now.RotateCerts(); err != nil || !renewed {
				logger.Error(err, "Renewing the control-plane certificate on demand failed", "renewed", renewed)
				continue
			}
			logger.Info("Renewed the control-plane certificate on demand")
		}
	}
}
