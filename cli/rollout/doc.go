// Package rollout is flotillactl rollout: kubectl rollout's verbs (status,
// history, pause, resume, approve, abort, undo) for a resource template
// rolled out stage by stage under a RolloutStrategy (flotilla.io).
//
// It owns naming the template from a kubectl argument (deployment/nginx),
// choosing its active RolloutRun, rendering a run's progress as lines,
// writing what people ask of a run (spec.paused, spec.abort,
// spec.approvals) and writing a ResourceRevision's content back into the
// template (undo). It reads runs and revisions and never writes their
// status: the rollout controller (controllers/rollout) starts runs, keeps
// revisions and moves clusters from one revision to the next.
package rollout
