// Package status aggregates the status of propagated resources back to the
// control plane, as Karmada's binding status controllers do.
//
// For every ResourceBinding and ClusterResourceBinding it owns
// status.aggregatedStatus (one item per Work of the binding: the member's
// reflected status, whether the Work was applied and the member object's
// health) and the FullyApplied condition, and it writes the status the
// resource interpreter aggregates from those items back to the resource
// template on the host. It is the only writer of these fields: Work and
// binding events coalesce on one queue keyed by binding.
//
// It does not own the other binding conditions (Scheduled belongs to the
// scheduler), the Works themselves (the binding controller) or their status
// (the execution and work status controllers), nor how a status is reflected
// or aggregated (the interpreter).
package status
