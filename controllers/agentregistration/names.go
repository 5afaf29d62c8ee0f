package agentregistration

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// LeaseDurationSeconds is the duration of the pre-created Lease; the agent
// sets its own when it renews.
const LeaseDurationSeconds = 40

// maxIssuedCertificates is how many fingerprints a Cluster remembers: the
// current certificate and a few renewals that may not have reached the
// agent yet.
const maxIssuedCertificates = 4

// credentialPrefix starts the host's credential id of a client certificate.
const credentialPrefix = "X509SHA256="

// credential returns the certificate fingerprint of a credential id extra.
func credential(ids []string) string {
	for _, id := range ids {
		if fp, ok := strings.CutPrefix(id, credentialPrefix); ok {
			return strings.ToLower(fp)
		}
	}
	return ""
}

// fingerprint is the hex SHA-256 of a certificate's DER, as the host's
// credential id gives it.
func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// IssuedCertificates returns the fingerprints of the agent certificates
// issued for c.
func IssuedCertificates(c *clusterv1alpha1.Cluster) []string {
	v := c.Annotations[names.AgentCertificatesAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}
