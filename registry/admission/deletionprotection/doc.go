// Package deletionprotection emulates Karmada's resource-deletion-protection
// webhook: an object labelled
// resourcetemplate.karmada.io/deletion-protected=Always cannot be deleted
// until the label is removed; any other value of the label protects nothing.
//
// It owns both halves of that rule. Plugin is the admission plugin of
// flotilla-apiserver, which guards the objects the server stores itself
// (policies, bindings, works, clusters, ...). HostPolicy and HostPolicyBinding
// are the ValidatingAdmissionPolicy that flotilla-apiserver installs on the
// host API server, which has no Karmada webhook, to guard the objects stored
// there (resource templates, namespaces). It does not install anything
// itself: cmd/flotilla-apiserver applies the policy at start.
package deletionprotection
