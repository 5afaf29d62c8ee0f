// Package multiget reads objects from the control plane and from member
// clusters for karmadactl's get and describe: the operation scope
// (--operation-scope=karmada|members|all) and the clusters (-C) decide
// where to read; every place is read concurrently and within a deadline;
// a cluster that cannot be read is named in a warning while the others'
// objects still print.
//
// Members are reached with cli/clusterproxy, through the control plane's
// clusters/{name}/proxy as the caller, so the member's RBAC applies and no
// member credentials are needed. The reading, the printers and the
// describers are kubectl's (k8s.io/cli-runtime's resource builder and
// printers, server-side Tables, k8s.io/kubectl's describe); this package
// adds the CLUSTER and ADOPTION columns karmadactl shows and merges the
// clusters' answers into one table or one list.
//
// It does not own the command line (cmd/flotillactl/app holds the flags)
// nor the proxy (proxy/ serves clusters/{name}/proxy).
package multiget
