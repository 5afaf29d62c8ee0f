package app

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// Bootstrap tokens, as kube-apiserver's bootstrap authenticator reads them
// (k8s.io/cluster-bootstrap/token/api, written out here because that module
// is not among Flotilla's dependencies).
const (
	bootstrapTokenSecretPrefix = "bootstrap-token-"
	bootstrapTokenIDKey        = "token-id"
	bootstrapTokenSecretKey    = "token-secret"
	bootstrapTokenExpiration   = "expiration"
	bootstrapTokenDescription  = "description"
	bootstrapTokenExtraGroups  = "auth-extra-groups"
	bootstrapTokenUsageAuth    = "usage-bootstrap-authentication"
	bootstrapTokenUsageSigning = "usage-bootstrap-signing"
	// clusterInfoKubeconfigKey holds the control plane's endpoint and CA
	// in kube-public/cluster-info; jwsKeyPrefix+<token id> its signature
	// with that token (written by the bootstrap signer).
	clusterInfoKubeconfigKey = "kubeconfig"
	jwsKeyPrefix             = "jws-kubeconfig-"

	tokenIDLength     = 6
	tokenSecretLength = 16
	tokenAlphabet     = "0123456789abcdefghijklmnopqrstuvwxyz"
)

var (
	tokenPattern      = regexp.MustCompile(`\A([a-z0-9]{6})\.([a-z0-9]{16})\z`)
	tokenGroupPattern = regexp.MustCompile(`\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z`)
	caHashPattern     = regexp.MustCompile(`\Asha256:[0-9a-f]{64}\z`)
)

// generateToken returns a fresh bootstrap token <id>.<secret>.
func generateToken() (string, error) {
	pick := func(n int) (string, error) {
		var b strings.Builder
		for range n {
			i, err := rand.Int(rand.Reader, big.NewInt(int64(len(tokenAlphabet))))
			if err != nil {
				return "", fmt.Errorf("generating a bootstrap token: %w", err)
			}
			b.WriteByte(tokenAlphabet[i.Int64()])
		}
		return b.String(), nil
	}
	id, err := pick(tokenIDLength)
	if err != nil {
		return "", err
	}
	secret, err := pick(tokenSecretLength)
	if err != nil {
		return "", err
	}
	return id + "." + secret, nil
}

// parseToken splits a bootstrap token into its id and secret.
func parseToken(token string) (id, secret string, err error) {
	m := tokenPattern.FindStringSubmatch(token)
	if m == nil {
		return "", "", errors.New(`a bootstrap token has the form "[a-z0-9]{6}.[a-z0-9]{16}"`)
	}
	return m[1], m[2], nil
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
	raw, ok := cm.Data[clusterInfoKubeconfigKey]
	if !ok {
		return clusterInfo{}, fmt.Errorf("configmap %s/%s has no %q key", cm.Namespace, cm.Name, clusterInfoKubeconfigKey)
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

// signClusterInfo computes the detached JWS (HS256, key = the token secret,
// kid = the token id) the bootstrap signer writes for content, in the
// compact form "<header>..<signature>".
func signClusterInfo(content, tokenID, tokenSecret string) string {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"` + tokenID + `"}`))
	return header + ".." + jwsSignature(header, content, tokenSecret)
}

func jwsSignature(header, content, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(header + "." + base64.RawURLEncoding.EncodeToString([]byte(content))))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// errNoSignature says cluster-info carries no signature for a token id:
// the bootstrap signer has not signed it yet, or the token is unknown,
// expired or not usable for signing.
var errNoSignature = errors.New("kube-public/cluster-info has no signature for this token")

// verifyClusterInfo checks the bootstrap signer's signature of cluster-info
// for the token: it proves that the content comes from a control plane
// that knows the token.
func verifyClusterInfo(cm *corev1.ConfigMap, tokenID, tokenSecret string) error {
	sig, ok := cm.Data[jwsKeyPrefix+tokenID]
	if !ok {
		return errNoSignature
	}
	parts := strings.Split(sig, ".")
	if len(parts) != 3 || parts[1] != "" {
		return fmt.Errorf("the signature of kube-public/cluster-info for token %s is not a detached JWS", tokenID)
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return fmt.Errorf("the signature of kube-public/cluster-info for token %s: %w", tokenID, err)
	}
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(rawHeader, &header); err != nil {
		return fmt.Errorf("the signature of kube-public/cluster-info for token %s: %w", tokenID, err)
	}
	if header.Alg != "HS256" || header.Kid != tokenID {
		return fmt.Errorf("the signature of kube-public/cluster-info for token %s has algorithm %q and key id %q, want HS256 and %s", tokenID, header.Alg, header.Kid, tokenID)
	}
	want := jwsSignature(parts[0], cm.Data[clusterInfoKubeconfigKey], tokenSecret)
	if !hmac.Equal([]byte(want), []byte(parts[2])) {
		return fmt.Errorf("the signature of kube-public/cluster-info does not match token %s: the token is wrong, or the content was tampered with", tokenID)
	}
	return nil
}
