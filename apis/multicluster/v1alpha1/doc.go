// Package v1alpha1 names the group multicluster.x-k8s.io/v1alpha1 of
// SIG-Multicluster: the multi-cluster services API (MCS API, KEP-1645),
// ServiceExport and ServiceImport, with the upstream schema
// (kubernetes-sigs/mcs-api), as Karmada uses them; and the Cluster
// Inventory API (KEP-4322), ClusterProfile, with the schema of
// kubernetes-sigs/cluster-inventory-api v1alpha1, one per Cluster,
// written by Flotilla as the clusters' manager.
//
// Flotilla does not serve this group: flotilla-apiserver installs its
// CustomResourceDefinitions (crds/) on the host, where users write
// ServiceExports and ServiceImports as resource templates and propagate
// them, and the CRDs themselves, to members as any other kind. The
// controllers that act on them read them as unstructured objects from the
// members, so the package holds no Go types: only the names and the CRDs.
package v1alpha1
