package membership

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstraptokens "k8s.io/cluster-bootstrap/util/tokens"
)

// Bootstrap tokens and kube-public/cluster-info are kube-apiserver's and
// kube-controller-manager's formats (the bootstrap authenticator and the
// bootstrap signer read and write them): their names, the token format and
// the detached JWS of cluster-info come from k8s.io/cluster-bootstrap, the
// module kubeadm and karmadactl use, so tokens and signatures are
// interchangeable with theirs.

var caHashPattern = regexp.MustCompile(`\Asha256:[0-9a-f]{64}\z`)

// parseToken splits a bootstrap token into its id and secret. The error
// never repeats the token: it is a credential.
func parseToken(token string) (id, secret string, err error) {
	id, secret, err = bootstraptokens.ParseToken(token)
	if err != nil {
		return "", "", errors.New(`a bootstrap token has the form "[a-z0-9]{6}.[a-z0-9]{16}"`)
	}
	return id, secret, nil
}

// caCertHash is the public-key pin of a CA certificate, as kubeadm writes
// it for --discovery-token-ca-cert-hash: sha256 of its DER-encoded
// SubjectPublicKeyInfo, in hex.
func caCertHash(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// validateCAHashes checks the format of --discovery-token-ca-cert-hash values.
func validateCAHashes(hashes []string) error {
	var errs []error
	for _, h := range hashes {
		if !caHashPattern.MatchString(strings.ToLower(h)) {
			errs = append(errs, fmt.Errorf("invalid --discovery-token-ca-cert-hash %q: want sha256:<64 hex digits>", h))
		}
	}
	return errors.Join(errs...)
}

// matchingCA returns the first CA certificate whose pin is among hashes.
func matchingCA(certs []*x509.Certificate, hashes []string) (*x509.Certificate, bool) {
	for _, c := range certs {
		for _, h := range hashes {
			if strings.EqualFold(caCertHash(c), h) {
				return c, true
			}
		}
	}
	return nil, false
}

// registerCAHash is the pin of the CA of a bundle that register will check:
// the first CA certificate of the bundle, else its first certificate.
func registerCAHash(bundle []byte) (string, error) {
	certs, err := certutil.ParseCertsPEM(bundle)
	if err != nil {
		return "", err
	}
	for _, c := range certs {
		if c.IsCA {
			return caCertHash(c), nil
		}
	}
	return caCertHash(certs[0]), nil
}

// clusterInfo is what kube-public/cluster-info says about the control plane.
type clusterInfo struct {
	server string
	ca     []byte
}

// parseClusterInfo reads the kubeconfig of kube-public/cluster-info.
func parseClusterInfo(cm *corev1.ConfigMap) (clusterInfo, error) {
	raw, ok := cm.Data[bootstrapapi.KubeConfigKey]
	if !ok {
		return clusterInfo{}, fmt.Errorf("configmap %s/%s has no %q key", cm.Namespace, cm.Name, bootstrapapi.KubeConfigKey)
	}
	cfg, err := clientcmd.Load([]byte(raw))
	if err != nil {
		return clusterInfo{}, fmt.Errorf("configmap %s/%s: reading its kubeconfig: %w", cm.Namespace, cm.Name, err)
	}
	for _, c := range cfg.Clusters {
		if len(c.CertificateAuthorityData) > 0 {
			return clusterInfo{server: c.Server, ca: c.CertificateAuthorityData}, nil
		}
	}
	return clusterInfo{}, fmt.Errorf("configmap %s/%s: its kubeconfig has no cluster with certificate-authority-data", cm.Namespace, cm.Name)
}

// errNoSignature says cluster-info carries no signature for a token id:
// the bootstrap signer has not signed it yet, or the token is unknown,
// expired or not usable for signing.
var errNoSignature = errors.New("kube-public/cluster-info has no signature for this token")

// verifyClusterInfo checks the bootstrap signer's signature of cluster-info
// for the token (a detached JWS, HS256 keyed by the token secret, with the
// token id as key id): it proves that the content comes from a control
// plane that knows the token.
func verifyClusterInfo(cm *corev1.ConfigMap, tokenID, tokenSecret string) error {
	sig, ok := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+tokenID]
	if !ok {
		return errNoSignature
	}
	if !jws.DetachedTokenIsValid(sig, cm.Data[bootstrapapi.KubeConfigKey], tokenID, tokenSecret) {
		return fmt.Errorf("the signature of kube-public/cluster-info does not match token %s: the token is wrong, or the content was tampered with", tokenID)
	}
	return nil
}

// generateToken returns a fresh bootstrap token <id>.<secret>.
func generateToken() (string, error) {
	token, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return "", fmt.Errorf("generating a bootstrap token: %w", err)
	}
	return token, nil
}
