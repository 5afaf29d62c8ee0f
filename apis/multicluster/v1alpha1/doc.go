// Package v1alpha1 names the multi-cluster services API (MCS API, KEP-1645)
// group multicluster.x-k8s.io/v1alpha1: ServiceExport and ServiceImport,
// with the upstream schema (kubernetes-sigs/mcs-api), as Karmada uses them.
//
// Flotilla does not serve this group: flotilla-apiserver installs its
// CustomResourceDefinitions (crds/) on the host, where users write
// ServiceExports and ServiceImports as resource templates and propagate
// them, and the CRDs themselves, to members as any other kind. The
// controllers that act on them read them as unstructured objects from the
// members, so the package holds no Go types: only the names and the CRDs.
package v1alpha1
