// Package agentregistration approves the client certificates of
// flotilla-agents (Pull mode) and gives each agent identity exactly the
// rights of its own cluster on the control plane.
//
// `flotillactl register` posts, with a bootstrap token, a
// CertificateSigningRequest for the user system:karmada:agent:<cluster>
// (group system:karmada:agents, signer kubernetes.io/kube-apiserver-client),
// annotated with the member's cluster id. This controller decides on it
// (Decide, a pure function): a request for a name already registered
// (unless a control-plane admin allowed it once, names.ReregisterAnnotation), for
// a member already registered under another name, for another name than
// the token is bound to (names.BoundTokenGroup), or beyond an unbound token's
// share (--max-clusters-per-token) is denied with a message saying so; a
// valid one gets the Cluster (syncMode Pull, spec.id, the registering token
// in names.RegisteredByAnnotation) created, the agent's least-privilege RBAC
// (AgentRBAC) and the pre-created heartbeat Lease, all owned by the
// Cluster, and is then approved. The host's kube-controller-manager
// (csrsigning) signs approved requests; the fingerprint of each signed
// certificate is recorded on its Cluster (names.AgentCertificatesAnnotation). An
// agent renewing its certificate (a request made by the agent's own
// identity for the same name) is approved while its Cluster exists and only
// for a certificate recorded there, so a certificate issued to an earlier
// Cluster of the same name is never renewed.
//
// It also owns the host RBAC the bootstrap flow needs (BootstrapRBAC):
// bootstrap tokens may create requests and read kube-public/cluster-info.
//
// It does not own the agent (cmd/flotilla-agent), the signing of
// certificates (kube-controller-manager), nor the Cluster's lifecycle after
// its creation (controllers/cluster); deleting the Cluster removes the RBAC
// and the Lease through their owner references.
package agentregistration
