// Package memberfactory gives kubectl's command packages (logs, exec,
// attach, api-resources, explain, create, delete, edit, label, annotate,
// patch) a cmdutil.Factory that is the control plane's or one member's, as
// karmadactl's FactoryForMemberCluster does: a member is reached through
// the control plane's clusters/{name}/proxy as the caller (package
// clusterproxy), so the member's RBAC applies and no member credentials are
// needed.
//
// It owns the flags that choose the target, with karmadactl's names
// (--operation-scope/-s, -C/--cluster), the decision they make (Target, a
// pure function), the check that a named member exists, and naming the
// member in the errors kubectl's commands print. It does not own the
// commands (cmd/flotillactl/app) nor the proxy (proxy/).
package memberfactory
