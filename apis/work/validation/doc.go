// Package validation validates the work.karmada.io kinds: Works and
// v1alpha2 ResourceBindings and ClusterResourceBindings (v1alpha1 bindings
// are converted to v1alpha2 before they are validated). It reproduces the
// constraints of Karmada's CRD schemas that the Go types cannot express and
// the permanent-id rules of its webhooks; defaults and generated labels are
// package mutation's job.
package validation
