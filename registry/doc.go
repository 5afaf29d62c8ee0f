// Package registry holds the REST storage of every karmada.io kind served by
// flotilla-apiserver, one package per API group (registry/<group>/rest.go
// returns the group's APIGroupInfo), and the scheme and storage versions
// they share (scheme.go).
//
// Most kinds follow one pattern — spec and status, validation and
// write-time mutation from apis/<group>/{validation,mutation}, a status
// subresource, short names, categories and printer columns — and are built
// by registry/internal/resource from a Definition. Kinds with more
// behaviour add to it in their group's package: clusters and their proxy
// (registry/cluster/cluster), the bindings' scheduling subresource and the
// FederatedResourceQuota check of their writes (registry/work), search's
// read-only resources (registry/search). registry/admission holds
// Karmada's resource-deletion-protection rule (deletionprotection): an
// admission plugin for the objects this server stores, and the admission
// policy installed on the host for the templates stored there.
package registry
