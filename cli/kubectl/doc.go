// Package kubectl runs kubectl's own commands (logs, exec, attach,
// api-resources, api-versions, explain, create, delete, edit, label,
// annotate, patch) as flotillactl's, as karmadactl does: in the control
// plane, or in a member cluster reached through the control plane's
// clusters/{name}/proxy as the caller (cli/clusterproxy's Factory and
// target flags).
//
// Each New<Verb> returns kubectl's cobra command for the verb with the
// flags that choose its target (-C required for logs and exec;
// --operation-scope and -C for the others) and flotillactl's examples;
// cmd/flotillactl adds it to the root command. The commands themselves are
// kubectl's (k8s.io/kubectl/pkg/cmd/...).
package kubectl
