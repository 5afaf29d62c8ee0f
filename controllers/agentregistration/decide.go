package agentregistration

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clustervalidation "github.com/flotilla-io/flotilla/apis/cluster/validation"
)

// Request is an agent's certificate request, as Recognize read it.
type Request struct {
	// Cluster is the cluster name, from the CN system:karmada:agent:<cluster>.
	Cluster string
	// ClusterID is the ClusterIDAnnotation; empty only for a renewal.
	ClusterID string
	// Renewal says the requester is the agent itself (user ==
	// system:karmada:agent:<cluster>), renewing its certificate; otherwise
	// it is a bootstrap token.
	Renewal bool
}

// Subresource is the certificatesigningrequests subresource the requester
// must be allowed to create for the request to be approved.
func (r Request) Subresource() string {
	if r.Renewal {
		return SubresourceSelfClusterAgent
	}
	return SubresourceClusterAgent
}

// allowedUsages are what an agent's client certificate may be used for:
// client authentication, with the key usages kubeadm and client-go ask for.
var allowedUsages = []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment}

// Recognize reads an agent's request. ours is false for requests that are
// none of this controller's business: another signer, or a subject that is
// not an agent's (neither the CN prefix nor the group). An error means the
// request claims to be an agent's but is not a valid one; it is denied with
// the error as message.
func Recognize(csr *certificatesv1.CertificateSigningRequest) (req Request, ours bool, err error) {
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return Request{}, false, nil
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return Request{}, false, nil
	}
	x, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return Request{}, false, nil
	}
	cluster, agentName := ClusterOfUser(x.Subject.CommonName)
	if !agentName && !slices.Contains(x.Subject.Organization, AgentsGroup) {
		return Request{}, false, nil
	}

	switch {
	case !agentName:
		return Request{}, true, fmt.Errorf("the subject common name %q is not %s<cluster name>", x.Subject.CommonName, UserPrefix)
	case !slices.Equal(x.Subject.Organization, []string{AgentsGroup}):
		return Request{}, true, fmt.Errorf("the subject organization must be exactly [%s], not %v", AgentsGroup, x.Subject.Organization)
	case len(x.DNSNames)+len(x.IPAddresses)+len(x.EmailAddresses)+len(x.URIs) > 0:
		return Request{}, true, errors.New("subject alternative names are not allowed in an agent certificate")
	}
	if msgs := clustervalidation.ValidateClusterName(cluster, false); len(msgs) > 0 {
		return Request{}, true, fmt.Errorf("invalid cluster name %q: %s", cluster, strings.Join(msgs, "; "))
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return Request{}, true, fmt.Errorf("usages %v lack %q", csr.Spec.Usages, certificatesv1.UsageClientAuth)
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowedUsages, u) {
			return Request{}, true, fmt.Errorf("usage %q is not allowed in an agent certificate (only %v)", u, allowedUsages)
		}
	}

	req = Request{Cluster: cluster, ClusterID: csr.Annotations[ClusterIDAnnotation]}
	switch user := csr.Spec.Username; {
	case user == x.Subject.CommonName && slices.Contains(csr.Spec.Groups, AgentsGroup):
		req.Renewal = true
	case strings.HasPrefix(user, BootstrapUserPrefix) && slices.Contains(csr.Spec.Groups, BootstrappersGroup):
		if req.ClusterID == "" {
			return Request{}, true, fmt.Errorf("the request has no %s annotation (the uid of the member's kube-system namespace)", ClusterIDAnnotation)
		}
	default:
		return Request{}, true, fmt.Errorf("user %q may not request a certificate for %s: only a bootstrap token, or that agent renewing its own certificate, may", user, x.Subject.CommonName)
	}
	return req, true, nil
}

// Action is what the controller does with a request.
type Action int

const (
	// Deny denies the request with Verdict.Message.
	Deny Action = iota
	// Approve creates the Cluster when Verdict.CreateCluster, applies the
	// agent's RBAC and approves.
	Approve
)

// Verdict is the decision on a request.
type Verdict struct {
	Action Action
	// CreateCluster says the Cluster does not exist yet.
	CreateCluster bool
	// Reason and Message go into the Approved or Denied condition.
	Reason, Message string
}

// Condition reasons.
const (
	ReasonAutoApproved = "AutoApproved"
	ReasonInvalid      = "InvalidAgentRequest"
	ReasonNotAllowed   = "NotAllowed"
	ReasonNameTaken    = "ClusterNameTaken"
	ReasonRegistered   = "ClusterAlreadyRegistered"
	ReasonNotPull      = "ClusterInPushMode"
	ReasonDeleting     = "ClusterBeingDeleted"
	ReasonUnknown      = "ClusterNotRegistered"
)

// Decide decides on a valid request. existing is the Cluster of the
// requested name, or nil; sameID are the other Clusters (other names)
// whose spec.id is the request's cluster id; authorized says whether the
// requester may create certificatesigningrequests/<req.Subresource()>.
//
// A first registration (bootstrap token) is approved when the name is free,
// or held by a Pull Cluster of the same id: registering the same member
// again re-issues its credentials, as Karmada does when an agent
// re-registers with the same cluster id (flotillactl register refuses
// earlier, in the member, unless --force, so a second register by mistake
// gets a clear error and changes nothing). It is denied when the name is
// held by another member (another id), by a Push cluster, or by a Cluster
// being deleted, and when this member is already registered under another
// name. A renewal is approved while the agent's Cluster exists and is not
// being deleted (and has the request's id, if the request gives one).
func Decide(req Request, existing *clusterv1alpha1.Cluster, sameID []*clusterv1alpha1.Cluster, authorized bool) Verdict {
	deny := func(reason, format string, args ...any) Verdict {
		return Verdict{Action: Deny, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	if !authorized {
		return deny(ReasonNotAllowed, "the requester may not create certificatesigningrequests/%s (see ClusterRole %s)", req.Subresource(), approverRole(req))
	}
	if existing != nil {
		switch {
		case existing.DeletionTimestamp != nil:
			return deny(ReasonDeleting, "cluster %s is being deleted; register again once it is gone", req.Cluster)
		case req.ClusterID != "" && existing.Spec.ID != "" && existing.Spec.ID != req.ClusterID:
			return deny(ReasonNameTaken, "cluster name %s is already taken by another cluster (id %s)", req.Cluster, existing.Spec.ID)
		case existing.Spec.SyncMode != clusterv1alpha1.Pull:
			return deny(ReasonNotPull, "cluster %s is registered in %s mode; unjoin it before registering it in Pull mode", req.Cluster, existing.Spec.SyncMode)
		}
	}
	if req.Renewal {
		if existing == nil {
			return deny(ReasonUnknown, "cluster %s is not registered; an agent may only renew the certificate of a registered cluster", req.Cluster)
		}
		return Verdict{Action: Approve, Reason: ReasonAutoApproved, Message: fmt.Sprintf("Auto approving the renewal of the certificate of the agent of cluster %s.", req.Cluster)}
	}
	var others []string
	for _, c := range sameID {
		if c.Name != req.Cluster {
			others = append(others, c.Name)
		}
	}
	if len(others) > 0 {
		slices.Sort(others)
		return deny(ReasonRegistered, "this member (id %s) is already registered as cluster %s; unregister it first", req.ClusterID, strings.Join(others, ", "))
	}
	if existing == nil {
		return Verdict{Action: Approve, CreateCluster: true, Reason: ReasonAutoApproved,
			Message: fmt.Sprintf("Auto approving the agent certificate of new cluster %s (id %s).", req.Cluster, req.ClusterID)}
	}
	return Verdict{Action: Approve, Reason: ReasonAutoApproved,
		Message: fmt.Sprintf("Auto approving a new agent certificate of cluster %s (id %s), registered again.", req.Cluster, req.ClusterID)}
}

func approverRole(req Request) string {
	if req.Renewal {
		return SelfAutoApproverRole
	}
	return AutoApproverRole
}

// decided says whether a request was already approved or denied (or failed).
func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	if len(csr.Status.Certificate) > 0 {
		return true
	}
	for _, c := range csr.Status.Conditions {
		if c.Status != corev1.ConditionFalse && (c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed) {
			return true
		}
	}
	return false
}
