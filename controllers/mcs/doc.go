// Package mcs carries a Service's endpoints from the members exporting it
// to the members importing it, with the MCS API's ServiceExport and
// ServiceImport (multicluster.x-k8s.io/v1alpha1), as Karmada's
// serviceExport, endpointSlice and serviceImport controllers do. Two
// controllers:
//
//   - serviceExport collects: for a ServiceExport present in a member
//     (propagated there, or made there), every EndpointSlice of the
//     Service in that member (label kubernetes.io/service-name) is held by
//     a Work in the member's execution namespace karmada-es-<cluster>,
//     labelled endpointslice.karmada.io/namespace, /name and /managed-by
//     (ServiceExport), suppressed and suspended so it is never applied;
//     the Works follow the member's slices, and go when the export goes,
//     when the member stops being Ready (its endpoints are withdrawn
//     everywhere; collected again once it is back) or leaves.
//   - serviceImport dispatches: a member where Flotilla applied a
//     ServiceImport (propagated from a template) gets, through Works in
//     its execution namespace that the execution controller (or the
//     agent) applies, the Service derived-<name> (ClusterSetIP imports: a
//     ClusterIP Service without selector, with the import's ports) and
//     every collected EndpointSlice of the service as
//     imported-<cluster>-<slice>, labelled
//     kubernetes.io/service-name=derived-<name>. When the import goes,
//     so do those Works, and the execution controller deletes what they
//     applied: only objects Flotilla applied, never a member's own.
//
// Unlike Karmada, which makes the derived Service and the imported
// EndpointSlices templates on its control plane and propagates them as
// the ServiceImport's dependencies, the Works are written directly: one
// write per importing member for a change of endpoints, and no template
// that is not the user's on the host.
//
// Members are read through the member hub's informers (ServiceExports and
// ServiceImports in the members that serve them, EndpointSlices in the
// members exporting something): one watch per member and kind for the
// whole process. What to write is decided in controllers/mcs/plan.
package mcs
