// Package execution applies Works to push-mode member clusters and reports
// what became of them: Karmada's execution and work-status controllers in one.
//
// It owns, for every Work in an execution namespace karmada-es-<cluster>:
// creating, updating (with the member's own fields retained and conflict
// resolution respected) and deleting or releasing its manifests in the
// member; the Work's finalizer karmada.io/execution-controller; and the
// whole Work status (the Applied and Dispatching conditions and the
// manifestStatuses reflected from the member objects), written by one
// writer. Each member has its own queue and workers, so a slow or
// unreachable member never stalls another. The objects Flotilla applied
// (only those labelled with a Work permanent id) are watched through the
// member hub (member.Hub): one informer per member and kind, shared with
// any other reader of the kind in the process, started in a member with
// the first object of the kind applied there and again whenever the
// member starts on a new connection; their changes and deletions enqueue
// their Works.
//
// An object that exists in the member before its Work (conflict resolution
// overwrite, as after karmadactl promote) and already holds the manifest
// but for Flotilla's own labels and annotations is taken over without a
// write: it keeps its resourceVersion, and is watched on its own
// (untouched.go, member.Hub.WatchObject) until a change of the manifest
// writes it. Deleting its Work never deletes it: only objects labelled
// with the Work's permanent id are deleted, and an adopted one is
// released.
//
// It does not own Works themselves (the binding controller writes them), the
// Works of pull-mode clusters (the agent applies those, with this
// controller over a hub of its one member), member clients (member.Cache)
// nor member informers (member.Hub).
package execution
