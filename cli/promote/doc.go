// Package promote is karmadactl promote: an object that already runs in
// a member cluster becomes a resource template in the control plane, with
// the PropagationPolicy (ClusterPropagationPolicy for a cluster-scoped
// kind) that places it on that member, and keeps running untouched: the
// template carries work.karmada.io/conflict-resolution=overwrite, so the
// execution controller takes the member object over in place.
//
// It owns reading the object (and, with --dependencies, what it depends
// on, as the resource interpreter lists it) from the member, turning it
// into a template (Template: what the API server set is pruned as
// Flotilla prunes manifests, apis/work/mutation), the plan of what is
// created (Plan, pure), creating it in the control plane all or nothing,
// and karmadactl's output. It does not own the policies' shape and names
// (cli/policy), reaching the member (cli/clusterproxy or a kubeconfig) nor
// the adoption itself (controllers/execution).
package promote
