// Package hpascaletargetmarker keeps member HPAs and Flotilla from fighting
// over replicas (Karmada's hpaScaleTargetMarker controller): when a
// HorizontalPodAutoscaler template claimed by a PropagationPolicy scales a
// resource template, that template gets the label
// resourcetemplate.karmada.io/retain-replicas=true, so the replicas the
// member HPA sets are retained when the template is applied again
// (interpreter.RetainReplicasLabel). The label is removed from the target
// when the HPA is deleted or points at another target.
//
// It owns only that label on the scale targets. It does not copy the member
// replicas back into the template (deploymentreplicassyncer does), and it
// neither propagates the HPAs nor retains the replicas (the detector and
// the interpreter's Retain do).
package hpascaletargetmarker
