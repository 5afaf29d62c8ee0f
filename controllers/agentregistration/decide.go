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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authuser "k8s.io/apiserver/pkg/authentication/user"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clustervalidation "github.com/flotilla-io/flotilla/apis/cluster/validation"
	"github.com/flotilla-io/flotilla/names"
)

// Request is an agent's certificate request, as Recognize read it.
type Request struct {
	// Cluster is the cluster name, from the CN system:karmada:agent:<cluster>.
	Cluster string
	// ClusterID is the names.ClusterIDAnnotation; empty only for a renewal.
	ClusterID string
	// Provider, Region and Zones are the topology a first registration
	// asks for its new Cluster.
	Provider, Region string
	Zones            []string
	// Renewal says the requester is the agent itself (user ==
	// system:karmada:agent:<cluster>), renewing its certificate; otherwise
	// it is a bootstrap token.
	Renewal bool
	// Requester is the user who made the request (system:bootstrap:<token
	// id> for a first registration).
	Requester string
	// BoundCluster is the one cluster name the bootstrap token may
	// register (its names.BoundTokenGroup), or "" for an unbound token.
	BoundCluster string
	// Credential is, for a renewal, the fingerprint of the certificate the
	// agent authenticated with (the host's x509 credential id).
	Credential string
}

// Subresource is the certificatesigningrequests subresource the requester
// must be allowed to create for the request to be approved.
func (r Request) Subresource() string {
	if r.Renewal {
		return names.SubresourceSelfClusterAgent
	}
	return names.SubresourceClusterAgent
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
	cluster, agentName := names.ClusterOfAgentUser(x.Subject.CommonName)
	if !agentName && !slices.Contains(x.Subject.Organization, names.AgentsGroup) {
		return Request{}, false, nil
	}

	switch {
	case !agentName:
		return Request{}, true, fmt.Errorf("the subject common name %q is not %s<cluster name>", x.Subject.CommonName, names.AgentUserPrefix)
	case !slices.Equal(x.Subject.Organization, []string{names.AgentsGroup}):
		return Request{}, true, fmt.Errorf("the subject organization must be exactly [%s], not %v", names.AgentsGroup, x.Subject.Organization)
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

	req = Request{Cluster: cluster, ClusterID: csr.Annotations[names.ClusterIDAnnotation], Requester: csr.Spec.Username,
		Provider: csr.Annotations[names.ClusterProviderAnnotation], Region: csr.Annotations[names.ClusterRegionAnnotation]}
	if z := csr.Annotations[names.ClusterZonesAnnotation]; z != "" {
		req.Zones = strings.Split(z, ",")
	}
	switch user := csr.Spec.Username; {
	case user == x.Subject.CommonName && slices.Contains(csr.Spec.Groups, names.AgentsGroup):
		req.Renewal = true
		req.Credential = credential(csr.Spec.Extra[authuser.CredentialIDKey])
	case strings.HasPrefix(user, names.BootstrapUserPrefix) && slices.Contains(csr.Spec.Groups, names.BootstrappersGroup):
		if req.ClusterID == "" {
			return Request{}, true, fmt.Errorf("the request has no %s annotation (the uid of the member's kube-system namespace)", names.ClusterIDAnnotation)
		}
		for _, g := range csr.Spec.Groups {
			if name, ok := strings.CutPrefix(g, names.BoundTokenGroupPrefix); ok {
				req.BoundCluster = name
			}
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
	// ReasonUnknownCertificate: a renewal made with a certificate not
	// issued for the Cluster as it now exists.
	ReasonUnknownCertificate = "CertificateNotIssuedForCluster"
	// ReasonTokenExhausted: an unbound token has registered its share.
	ReasonTokenExhausted = "TokenRegistrationsExhausted"
)

// Facts are what the controller knows about a request besides the
// request itself.
type Facts struct {
	// Existing is the Cluster of the requested name, or nil.
	Existing *clusterv1alpha1.Cluster
	// SameID are the Clusters whose spec.id is the request's cluster id.
	SameID []*clusterv1alpha1.Cluster
	// Authorized says whether the requester may create
	// certificatesigningrequests/<req.Subresource()>.
	Authorized bool
	// ByToken is how many Clusters the request's bootstrap token has
	// registered (names.RegisteredByAnnotation).
	ByToken int
	// MaxPerToken is how many clusters a token not bound to one name may
	// register; 0 means no limit.
	MaxPerToken int
}

// Decide decides on a valid request.
//
// A first registration (bootstrap token) is approved only for a free name:
// a name already registered is issued again only when a control-plane
// admin allowed it (names.ReregisterAnnotation on the Cluster, set to the
// member's id, by flotillactl register --force with the admin's
// kubeconfig) or deleted the Cluster; a matching id alone is never enough,
// since anyone who can read Clusters knows it. It is also denied when the
// token is bound to another name (names.BoundTokenGroup), when an unbound token
// has registered MaxPerToken clusters already, when the name is held by a
// Push cluster or a Cluster being deleted, and when this member is already
// registered under another name.
//
// A renewal is approved while the agent's Cluster exists and is not being
// deleted, and only for a certificate issued for that Cluster
// (names.AgentCertificatesAnnotation): a certificate issued to an earlier
// Cluster of the same name, deleted since, is not renewed.
func Decide(req Request, f Facts) Verdict {
	deny := func(reason, format string, args ...any) Verdict {
		return Verdict{Action: Deny, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	if !f.Authorized {
		return deny(ReasonNotAllowed, "the requester may not create certificatesigningrequests/%s (see ClusterRole %s)", req.Subresource(), approverRole(req))
	}
	existing := f.Existing
	if existing != nil {
		switch {
		case existing.DeletionTimestamp != nil:
			return deny(ReasonDeleting, "cluster %s is being deleted; register again once it is gone", req.Cluster)
		case existing.Spec.SyncMode != clusterv1alpha1.Pull:
			return deny(ReasonNotPull, "cluster %s is registered in %s mode; unjoin it before registering it in Pull mode", req.Cluster, existing.Spec.SyncMode)
		}
	}
	if req.Renewal {
		switch {
		case existing == nil:
			return deny(ReasonUnknown, "cluster %s is not registered; an agent may only renew the certificate of a registered cluster", req.Cluster)
		case req.Credential == "" || !slices.Contains(IssuedCertificates(existing), req.Credential):
			return deny(ReasonUnknownCertificate, "the certificate this request was made with was not issued for cluster %s as it is now registered (it may predate the Cluster); register the member again", req.Cluster)
		}
		return Verdict{Action: Approve, Reason: ReasonAutoApproved, Message: fmt.Sprintf("Auto approving the renewal of the certificate of the agent of cluster %s.", req.Cluster)}
	}
	if req.BoundCluster != "" && req.BoundCluster != req.Cluster {
		return deny(ReasonNotAllowed, "this bootstrap token may register only cluster %s, not %s", req.BoundCluster, req.Cluster)
	}
	if existing != nil {
		switch {
		case existing.Spec.ID == "":
			// An empty id matches nothing.
			return deny(ReasonNameTaken, "cluster name %s is already taken by a cluster registered without an id; an admin must delete it before this member registers", req.Cluster)
		case existing.Spec.ID != req.ClusterID:
			return deny(ReasonNameTaken, "cluster name %s is already taken by another cluster (id %s)", req.Cluster, existing.Spec.ID)
		}
	}
	var others []string
	for _, c := range f.SameID {
		if c.Name != req.Cluster {
			others = append(others, c.Name)
		}
	}
	if len(others) > 0 {
		slices.Sort(others)
		return deny(ReasonRegistered, "this member (id %s) is already registered as cluster %s; unregister it first", req.ClusterID, strings.Join(others, ", "))
	}
	if existing == nil {
		if req.BoundCluster == "" && f.MaxPerToken > 0 && f.ByToken >= f.MaxPerToken {
			return deny(ReasonTokenExhausted, "bootstrap token %s has registered %d cluster(s), the most a token not bound to a cluster name may (flotilla-apiserver --max-clusters-per-token); create a token with --cluster-name %s",
				strings.TrimPrefix(req.Requester, names.BootstrapUserPrefix), f.ByToken, req.Cluster)
		}
		return Verdict{Action: Approve, CreateCluster: true, Reason: ReasonAutoApproved,
			Message: fmt.Sprintf("Auto approving the agent certificate of new cluster %s (id %s).", req.Cluster, req.ClusterID)}
	}
	if existing.Annotations[names.ReregisterAnnotation] != req.ClusterID {
		return deny(ReasonRegistered, "cluster %s is already registered; a control-plane admin must allow registering it again (flotillactl register --force --control-plane-kubeconfig=<admin kubeconfig>, or kubectl annotate cluster %s %s=%s), or delete the Cluster",
			req.Cluster, req.Cluster, names.ReregisterAnnotation, req.ClusterID)
	}
	return Verdict{Action: Approve, Reason: ReasonAutoApproved,
		Message: fmt.Sprintf("Auto approving a new agent certificate of cluster %s (id %s), registered again as an admin allowed.", req.Cluster, req.ClusterID)}
}

func approverRole(req Request) string {
	if req.Renewal {
		return SelfAutoApproverRole
	}
	return AutoApproverRole
}

// approvedAt returns when a request was approved by this controller, or nil.
func approvedAt(csr *certificatesv1.CertificateSigningRequest) *metav1.Time {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue && c.Reason == ReasonAutoApproved {
			return &c.LastUpdateTime
		}
	}
	return nil
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
