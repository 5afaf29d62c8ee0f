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
//     everywhere; collected again once it is back) or leaves. Each slice
//     exported with a ServiceExport (one only provided to a
//     MultiClusterService gets none, as in Karmada) also has a copy on
//     the control plane, in the host API server: the EndpointSlice
//     imported-<cluster>-<slice> in
//     the service's namespace, labelled
//     kubernetes.io/service-name=derived-<name> and
//     endpointslice.karmada.io/provision-cluster=<cluster>, as Karmada's
//     endpointslice controller makes it; the copies follow the Works.
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
// Karmada propagates the derived Service (a template on its control
// plane) and those copies to the importing members as the ServiceImport's
// dependencies. Here the importing members' Works are written directly,
// from the collected slices: one write per importing member for a change
// of endpoints, and one to the control plane's copy, which is shown, never
// propagated (claimed with resourcetemplate.karmada.io/claimed-by, which
// the detector and the dependencies distributor leave alone). There is no
// derived Service on the control plane.
//
// Members are read through the member hub's informers (ServiceExports and
// ServiceImports in the members that serve them, EndpointSlices in the
// members exporting something): one watch per member and kind for the
// whole process; the control plane's copies through an informer of the
// host's EndpointSlices that holds only them. What to write is decided in
// controllers/mcs/plan.
package mcs
