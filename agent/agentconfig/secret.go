// Package agentconfig owns the member Secret that holds a Pull-mode
// agent's control-plane kubeconfig (names.AgentConfigSecret,
// key AgentConfigKey, Karmada's karmada-agent-config): it is the only
// writer of that Secret. flotillactl register writes it whole (Write);
// the agent puts each renewed client certificate into it
// (UpdateCertificate). Deleting it (flotillactl unregister) and the
// names themselves are not this package's.
package agentconfig

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/retry"

	"github.com/flotilla-io/flotilla/names"
)

// Outcome says what a write did to the Secret.
type Outcome string

// Outcomes of Write and UpdateCertificate.
const (
	Created    Outcome = "created"
	Updated    Outcome = "updated with the current certificate"
	UpToDate   Outcome = "already holds the current certificate"
	Absent     Outcome = "absent: not updated"
	Foreign    Outcome = "holds another cluster's or identity's kubeconfig: not updated"
	Newer      Outcome = "holds a newer certificate: not updated"
	Unreadable Outcome = "holds no readable kubeconfig: not updated"
	// Replaced is Write's outcome for a Secret that existed.
	Replaced Outcome = "updated"
)

// Registered returns the cluster the member's agent Secret in namespace
// says the agent is registered as ("" when the Secret carries no name),
// and whether the Secret exists.
func Registered(ctx context.Context, member kubernetes.Interface, namespace string) (cluster string, exists bool, err error) {
	s, err := member.CoreV1().Secrets(namespace).Get(ctx, names.AgentConfigSecret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("reading secret %s/%s on the member: %w", namespace, names.AgentConfigSecret, err)
	}
	return s.Annotations[names.AgentClusterAnnotation], true, nil
}

// Write makes the member's agent Secret in namespace hold kubeconfig, the
// agent of cluster's: it creates the Secret with labels, or replaces the
// kubeconfig and the cluster annotation of the one there, keeping its
// other labels and annotations. It returns Created or Replaced.
func Write(ctx context.Context, member kubernetes.Interface, namespace, cluster string, kubeconfig []byte, labels map[string]string) (Outcome, error) {
	secrets := member.CoreV1().Secrets(namespace)
	var outcome Outcome
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := secrets.Get(ctx, names.AgentConfigSecret, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			s := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: namespace, Name: names.AgentConfigSecret, Labels: maps.Clone(labels),
					Annotations: map[string]string{names.AgentClusterAnnotation: cluster},
				},
				Type: corev1.SecretTypeOpaque,
				Data: map[string][]byte{names.AgentConfigKey: kubeconfig},
			}
			if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating secret %s/%s on the member: %w", namespace, s.Name, err)
			}
			outcome = Created
			return nil
		case err != nil:
			return fmt.Errorf("reading secret %s/%s on the member: %w", namespace, names.AgentConfigSecret, err)
		}
		cur.Data, cur.Type = map[string][]byte{names.AgentConfigKey: kubeconfig}, corev1.SecretTypeOpaque
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[names.AgentClusterAnnotation] = cluster
		if _, err := secrets.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating secret %s/%s on the member: %w", namespace, cur.Name, err)
		}
		outcome = Replaced
		return nil
	})
	return outcome, err
}

// UpdateCertificate replaces the client certificate and key of the
// kubeconfig in the member's agent Secret in namespace with the agent of
// cluster's current ones (leaf is certPEM's first certificate), keeping
// the rest (server, CA). It changes nothing when the Secret is absent,
// belongs to another cluster, holds another identity's credentials or a
// certificate at least as new, and says so in its Outcome.
func UpdateCertificate(ctx context.Context, member kubernetes.Interface, namespace, cluster string, certPEM, keyPEM []byte, leaf *x509.Certificate) (Outcome, error) {
	secrets := member.CoreV1().Secrets(namespace)
	var outcome Outcome
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := secrets.Get(ctx, names.AgentConfigSecret, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			outcome = Absent
			return nil
		}
		if err != nil {
			return err
		}
		if name := s.Annotations[names.AgentClusterAnnotation]; name != "" && name != cluster {
			outcome = Foreign
			return nil
		}
		kc, err := clientcmd.Load(s.Data[names.AgentConfigKey])
		if err != nil {
			outcome = Unreadable
			return nil
		}
		ctxt := kc.Contexts[kc.CurrentContext]
		if ctxt == nil || kc.AuthInfos[ctxt.AuthInfo] == nil {
			outcome = Unreadable
			return nil
		}
		ai := kc.AuthInfos[ctxt.AuthInfo]
		held, err := leafOf(ai.ClientCertificateData)
		switch {
		case err != nil || !IsAgentCertificate(held, cluster):
			outcome = Foreign
			return nil
		case bytes.Equal(held.Raw, leaf.Raw):
			outcome = UpToDate
			return nil
		case held.NotBefore.After(leaf.NotBefore):
			outcome = Newer
			return nil
		}
		ai.ClientCertificateData, ai.ClientKeyData = certPEM, keyPEM
		ai.ClientCertificate, ai.ClientKey = "", ""
		data, err := clientcmd.Write(*kc)
		if err != nil {
			return err
		}
		s.Data[names.AgentConfigKey] = data
		if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			return err
		}
		outcome = Updated
		return nil
	})
	return outcome, err
}

// IsAgentCertificate says whether cert is the identity of the agent of
// cluster, the one flotillactl register has issued and the control plane
// renews.
func IsAgentCertificate(cert *x509.Certificate, cluster string) bool {
	return cert.Subject.CommonName == names.AgentUserName(cluster) &&
		slices.Contains(cert.Subject.Organization, names.AgentsGroup)
}

// leafOf parses the first certificate of a PEM bundle.
func leafOf(certPEM []byte) (*x509.Certificate, error) {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}
