// Package controlplane builds flotillactl's clients of the control plane
// from the kubectl flags of its root command (--kubeconfig, --context,
// ...). The control plane is a kube-apiserver that aggregates
// flotilla-apiserver, so core objects and karmada.io objects are served by
// the same endpoint. It also holds the user agent flotillactl sends to the
// control plane and to member clusters.
//
// It does not reach members (cli/clusterproxy) and does not own the flags
// (cmd/flotillactl).
package controlplane
