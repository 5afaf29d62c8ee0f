// Package plan decides, without a client, what carries a service's
// endpoints across members (the MCS API's ServiceExport and ServiceImport,
// as Karmada implements them):
//
//   - the Works that hold, in an exporting member's execution namespace,
//     the EndpointSlices collected from it (CollectedWork);
//   - the Works that give an importing member the derived Service
//     derived-<service> and the collected EndpointSlices as
//     imported-<cluster>-<slice> (ImportWorks);
//   - the control plane's copies of the slices exported with a
//     ServiceExport, named and labelled as the importing members' ones
//     (HostSlice), and the writes that keep them (ReconcileHost);
//   - the writes that turn the stored Works into those (Reconcile): a Work
//     may be kept by several controllers (its endpointslice.karmada.io/
//     managed-by label lists them), and is deleted when the last lets it
//     go; a Work of that name that no such controller keeps is never
//     touched.
//
// The controllers in controllers/mcs read the members and the Works and
// write what this package decides.
package plan
