// Package overrides applies ClusterOverridePolicies and OverridePolicies to a
// resource template for one member cluster, the way Karmada's override manager
// does (docs/compatibility.md, Overrides), and records what it applied in the
// policy.karmada.io/applied-(cluster-)overrides annotations of the Work.
//
// It owns the selection and ordering of the policies and the semantics of
// every overrider (image, command, args, labels, annotations, field,
// plaintext). It does not list policies, watch them or build Works: the
// binding controller passes the policies from its listers and decides what
// to do with the result. Policies are read only; they are shared cache
// objects.
package overrides
