// Package membership adds member clusters to the control plane and removes
// them, as karmadactl join, unjoin, register, unregister and token do.
//
// It owns what those commands do to a member cluster and to the control
// plane: the names, labels and fields of the objects they create, update
// and delete (join: the member's ServiceAccounts, RBAC and token Secrets,
// the control plane's credential Secrets and the Cluster; register:
// bootstrap-token discovery with a pinned CA, the agent's certificate
// request, its kubeconfig, member RBAC and the agent's Deployment from
// charts/flotilla-agent; token: bootstrap tokens and kube-public/cluster-info),
// and the identity check they share (the member's kube-system uid against
// the Cluster's spec.id, a pure function). Each object is made to match
// what the command wants and written only when it differs.
//
// It does not own the APIs (apis/), the approval of an agent's certificate
// (controllers/agentregistration), nor the controllers that later act on
// the Cluster objects it writes. The flags are declared in
// cmd/flotillactl; each command's Options take them and Run does the work,
// with its clients built from the control plane's kubectl flags
// (cli/controlplane) or given by tests as fakes.
package membership
