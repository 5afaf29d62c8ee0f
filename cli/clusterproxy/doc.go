// Package clusterproxy is how flotillactl reaches a member cluster: through
// the control plane's clusters/{name}/proxy, as the user the control plane
// knows (the member's RBAC applies to the impersonated caller), so a user
// needs no member credentials, as karmadactl does.
//
// Config and Reach give a member's client configuration and check that it
// answers; Getter is a genericclioptions.RESTClientGetter of one member;
// Factory is the cmdutil.Factory kubectl's command packages (logs, exec,
// attach, api-resources, explain, create, delete, edit, label, annotate,
// patch) run over: the control plane's, or a member's once Bind has read
// the flags that choose the target. It owns those flags, with karmadactl's
// names (--operation-scope/-s, -C/--cluster), the decision they make
// (Target, a pure function), the check that a named member exists
// (CheckCluster), and naming the member in the errors kubectl's commands
// print (NameCluster).
//
// It does not own the commands (cmd/flotillactl, cli/kubectl) nor the proxy
// itself (proxy/).
package clusterproxy
