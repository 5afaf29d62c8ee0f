// Package execution applies Works to push-mode member clusters and reports
// what became of them: Karmada's execution and work-status controllers in one.
//
// It owns, for every Work in an execution namespace karmada-es-<cluster>:
// creating, updating (with the member's own fields retained and conflict
// resolution respected) and deleting or releasing its manifests in the
// member; the Work's finalizer karmada.io/execution-controller; and the
// whole Work status (the Applied and Dispatching conditions and the
// manifestStatuses reflected from the member objects), written by one
// writer. Each member has its own queue and workers, and its own informers
// on the objects Flotilla applied there (only those labelled with a Work
// permanent id), so a slow or unreachable member never stalls another.
//
// It does not own Works themselves (the binding controller writes them), the
// Works of pull-mode clusters (the agent applies those) nor member clients
// (member.Cache).
package execution
