// Package mutation reproduces the effects of Karmada's mutating admission
// webhooks for the work.karmada.io kinds (works on CREATE and UPDATE,
// resourcebindings and clusterresourcebindings on CREATE) as plain functions
// the registry calls before validation. It owns manifest pruning too, the
// "Prune" operation of the resource interpreter. It does not validate: a
// manifest it cannot read is left untouched for package validation to reject.
package mutation
