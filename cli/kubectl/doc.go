// Package kubectl runs kubectl's own commands (logs, exec, attach,
// api-resources, api-versions, explain, create, delete, edit, label,
// annotate, patch) as flotillactl's, as karmadactl does: in the control
// plane, or in a member cluster reached through the control plane's
// clusters/{name}/proxy as the caller (cli/clusterproxy's Factory and
// target flags).
//
// It owns which flags choose the target of such a command (InMember: -C
// required; Scoped: --operation-scope and -C). It does not own the
// commands themselves (k8s.io/kubectl/pkg/cmd/...) nor their help in
// flotillactl (cmd/flotillactl).
package kubectl
