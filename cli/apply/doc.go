// Package apply is karmadactl apply: kubectl apply against the control
// plane and, with --all-clusters or -C/--cluster, a PropagationPolicy
// (a ClusterPropagationPolicy for a cluster-scoped kind) per applied
// object that places it on every member or on the members named, applied
// right after the object, named as karmadactl names it (package policy).
//
// It owns those flags, their validation (karmadactl's errors), and
// turning kubectl's list of objects into the objects and their policies.
// It does not own kubectl apply itself (k8s.io/kubectl/pkg/cmd/apply) nor
// the policies' shape and names (cli/policy).
package apply
