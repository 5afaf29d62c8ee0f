// Package names declares, once, every name Flotilla's processes share: the
// control plane, its agents, flotillactl, the chart and the test bed. The
// namespaces (namespaces.go), the identities of agents and bootstrap tokens
// (identities.go), the annotations of the registration flow
// (annotations.go), the Secrets and their keys (secrets.go), what the
// server runs on the host (server.go), and the names Karmada derives for
// the objects it makes: bindings, Works, execution namespaces, derived
// Services (objects.go).
//
// It is a leaf: it imports nothing of this module, so every folder, apis/
// included, may import it. The labels, annotations and conditions of an API
// group's objects are declared with its types, in
// apis/<group>/<version>/well_known.go, each once.
package names
