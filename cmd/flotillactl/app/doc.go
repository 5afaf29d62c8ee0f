// Package app is the command line of flotillactl (and of the kubectl
// plugin kubectl-flotilla, the same binary under another name): cobra
// wiring only. Each file declares one command (or a command and its
// subcommands), its help and its flags, and calls the package under cli/
// that does the work:
//
//	join, unjoin, register, unregister, token   cli/membership
//	taint, cordon, uncordon                     cli/taint
//	interpret                                   cli/interpret
//	init, deinit                                cli/initialize (cli/chartapply applies the chart)
//	backup, restore                             cli/backup
//	addons                                      cli/addons
//	get, describe                               cli/multiget
//	apply                                       cli/apply
//	promote                                     cli/promote
//	top                                         cli/top
//	search                                      cli/search
//	version                                     cli/version
//	logs, exec, attach, api-resources,          cli/kubectl: kubectl's own commands,
//	api-versions, explain, create, delete,      built and documented there, run in the
//	edit, label, annotate, patch                control plane or a member (cli/clusterproxy)
//
// The root command (root.go) holds the kubectl flags that locate the
// control plane (--kubeconfig, --context, ...), from which the cli/
// packages build their clients (cli/controlplane); flags.go holds the
// helpers that accept karmadactl's spellings of flags. A command's tests
// here run it through its flags; the tests of what it does are in its
// cli/ package.
package app
