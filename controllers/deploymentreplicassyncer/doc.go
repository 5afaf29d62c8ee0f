// Package deploymentreplicassyncer copies the replicas member HPAs chose
// back into the Deployment template (Karmada's deploymentReplicasSyncer
// controller): for a Deployment template labelled
// resourcetemplate.karmada.io/retain-replicas=true whose replicas are
// divided among clusters, once the status aggregated from every member is
// current, spec.replicas is set to the aggregated status.replicas. The
// template then says how many replicas run, and rescheduling divides that
// number rather than the stale one.
//
// It owns only spec.replicas of those templates. It does not label them
// (hpascaletargetmarker does), aggregate their status (the status
// controller) or keep member replicas (the interpreter's Retain).
package deploymentreplicassyncer
