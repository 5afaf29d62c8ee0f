package membership

// The bootstrap half of register: what it asks of the control plane with
// the endpoint and the bootstrap token alone (cluster-info, the token's
// identity, the agent's certificate), before anything is written to the
// member.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/names"
)

// discover reads cluster-info from the endpoint without trusting it yet,
// and trusts its CA only if it matches a pinned hash, or with
// --discovery-token-unsafe-skip-ca-verification if the token signed it.
func (o *RegisterOptions) discover(ctx context.Context) (clusterInfo, error) {
	anon, err := o.clientFor(&rest.Config{Host: o.Endpoint, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, Timeout: 10 * time.Second})
	if err != nil {
		return clusterInfo{}, err
	}
	var (
		info    clusterInfo
		lastErr error
	)
	err = wait.PollUntilContextTimeout(ctx, o.interval, o.Timeout, true, func(ctx context.Context) (bool, error) {
		cm, err := anon.CoreV1().ConfigMaps(names.ClusterInfoNamespace).Get(ctx, names.ClusterInfoName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return false, fmt.Errorf("the control plane %s has no %s/%s: run `%s token create` on the control plane first", o.Endpoint, names.ClusterInfoNamespace, names.ClusterInfoName, o.self)
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			return false, fmt.Errorf("the control plane %s refuses to show %s/%s to anonymous users: %w", o.Endpoint, names.ClusterInfoNamespace, names.ClusterInfoName, err)
		case err != nil:
			lastErr = fmt.Errorf("reading %s/%s from %s: %w", names.ClusterInfoNamespace, names.ClusterInfoName, o.Endpoint, err)
			return false, nil // the control plane may be starting
		}
		if info, err = parseClusterInfo(cm); err != nil {
			return false, err
		}
		if len(o.CACertHashes) > 0 {
			certs, err := certutil.ParseCertsPEM(info.ca)
			if err != nil {
				return false, fmt.Errorf("the CA of %s/%s: %w", names.ClusterInfoNamespace, names.ClusterInfoName, err)
			}
			if _, ok := matchingCA(certs, o.CACertHashes); !ok {
				var got []string
				for _, c := range certs {
					got = append(got, caCertHash(c))
				}
				return false, fmt.Errorf("the CA of the control plane %s does not match --discovery-token-ca-cert-hash: its hash is %s, not %s; nothing was registered",
					o.Endpoint, strings.Join(got, ", "), strings.Join(o.CACertHashes, ", "))
			}
		}
		// With a pinned CA the token is checked against the server itself;
		// a signature, if there is one yet, must match it all the same.
		switch err := verifyClusterInfo(cm, o.tokenID, o.secret); {
		case errors.Is(err, errNoSignature) && len(o.CACertHashes) > 0:
			return true, nil
		case errors.Is(err, errNoSignature):
			lastErr = fmt.Errorf("%w %s yet: the token is wrong, expired, or the control plane's bootstrap signer has not signed it", err, o.tokenID)
			return false, nil
		case err != nil:
			return false, err
		}
		return true, nil
	})
	if err != nil {
		if wait.Interrupted(err) && lastErr != nil {
			return clusterInfo{}, fmt.Errorf("after %s: %w", o.Timeout, lastErr)
		}
		return clusterInfo{}, err
	}
	return info, nil
}

// checkBootstrapToken asks the control plane who the token is: a refused
// token fails here, clearly, before anything is requested.
func checkBootstrapToken(ctx context.Context, bootstrap kubernetes.Interface, tokenID string) error {
	review, err := bootstrap.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the control plane refused bootstrap token %s: it is wrong, expired or deleted (create one with `token create`); nothing was registered", tokenID)
	case err != nil:
		return fmt.Errorf("authenticating with bootstrap token %s: %w", tokenID, err)
	}
	user := review.Status.UserInfo
	if user.Username != names.BootstrapUserPrefix+tokenID {
		return fmt.Errorf("the token authenticates as %q, not as bootstrap token %s", user.Username, tokenID)
	}
	return nil
}

// requestCertificate posts the agent's certificate request with the
// bootstrap client and waits for the control plane's decision.
func (o *RegisterOptions) requestCertificate(ctx context.Context, bootstrap kubernetes.Interface, clusterID string, out io.Writer) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: names.AgentUserName(o.ClusterName), Organization: []string{names.AgentsGroup}},
	}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the certificate request: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "agent-csr-" + o.ClusterName + "-",
			Annotations:  o.csrAnnotations(clusterID),
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName:        certificatesv1.KubeAPIServerClientSignerName,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			ExpirationSeconds: ptr.To(o.CertExpirationSeconds),
		},
	}
	csrs := bootstrap.CertificatesV1().CertificateSigningRequests()
	csr, err = csrs.Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("posting the certificate request with the bootstrap token: %w", err)
	}
	fmt.Fprintf(out, "control plane: certificatesigningrequest/%s created for %s\n", csr.Name, names.AgentUserName(o.ClusterName))

	var last *certificatesv1.CertificateSigningRequest
	err = wait.PollUntilContextTimeout(ctx, o.interval, o.Timeout, true, func(ctx context.Context) (bool, error) {
		cur, err := csrs.Get(ctx, csr.Name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("reading certificate request %s: %w", csr.Name, err)
		}
		last = cur
		for _, c := range cur.Status.Conditions {
			switch c.Type {
			case certificatesv1.CertificateDenied:
				return false, fmt.Errorf("the control plane denied the certificate request %s: %s; nothing was registered", csr.Name, c.Message)
			case certificatesv1.CertificateFailed:
				return false, fmt.Errorf("the control plane failed to sign the certificate request %s: %s", csr.Name, c.Message)
			}
		}
		return len(cur.Status.Certificate) > 0, nil
	})
	if err != nil {
		if wait.Interrupted(err) {
			approved := last != nil && len(last.Status.Conditions) > 0
			if approved {
				return nil, nil, fmt.Errorf("certificate request %s was approved but not signed after %s (does the control plane's kube-controller-manager run the csrsigning controller?)", csr.Name, o.Timeout)
			}
			return nil, nil, fmt.Errorf("certificate request %s was not decided after %s (does flotilla-apiserver run the %s controller?)", csr.Name, o.Timeout, names.AgentRegistrationController)
		}
		return nil, nil, err
	}
	fmt.Fprintf(out, "control plane: certificatesigningrequest/%s approved and signed\n", csr.Name)
	return last.Status.Certificate, keyPEM, nil
}

// agentKubeconfig is the agent's kubeconfig of the control plane.
func (o *RegisterOptions) agentKubeconfig(ca, certPEM, keyPEM []byte) ([]byte, error) {
	user := names.AgentUserName(o.ClusterName)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[agentKubeconfigCluster] = &clientcmdapi.Cluster{Server: o.Endpoint, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[agentKubeconfigCluster] = &clientcmdapi.Context{Cluster: agentKubeconfigCluster, AuthInfo: user}
	cfg.CurrentContext = agentKubeconfigCluster
	return clientcmd.Write(*cfg)
}

// csrAnnotations are the annotations of the certificate request: the
// member's id and the topology asked for the new Cluster.
func (o *RegisterOptions) csrAnnotations(clusterID string) map[string]string {
	a := map[string]string{names.ClusterIDAnnotation: clusterID}
	if o.ClusterProvider != "" {
		a[names.ClusterProviderAnnotation] = o.ClusterProvider
	}
	if o.ClusterRegion != "" {
		a[names.ClusterRegionAnnotation] = o.ClusterRegion
	}
	if len(o.ClusterZones) > 0 {
		a[names.ClusterZonesAnnotation] = strings.Join(o.ClusterZones, ",")
	}
	return a
}
