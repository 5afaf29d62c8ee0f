package execution

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Event reasons, Karmada's.
const (
	eventReasonSyncSucceed     = "SyncSucceed"
	eventReasonSyncFailed      = "SyncFailed"
	eventReasonWorkDispatching = "WorkDispatching"

	eventReasonReflectStatusSucceed   = "ReflectStatusSucceed"
	eventReasonReflectStatusFailed    = "ReflectStatusFailed"
	eventReasonInterpretHealthSucceed = "InterpretHealthSucceed"
	eventReasonInterpretHealthFailed  = "InterpretHealthFailed"
)

// eventsReconciler reports what an apply did, on the Work and on the
// resource template of each manifest.
type eventsReconciler struct {
	// event records an event.
	event eventFunc
}

// reconcile records a success only when something was written (an apply
// that found everything in place says nothing), a failure every time.
func (r *eventsReconciler) reconcile(work *workv1alpha1.Work, cluster string, outcomes []outcome, applyErr error) {
	wrote := false
	for _, o := range outcomes {
		if o.desired == nil {
			continue
		}
		switch {
		case o.err != nil:
			r.templateEvent(o.desired, corev1.EventTypeWarning, eventReasonSyncFailed,
				fmt.Sprintf("Failed to create or update resource(%s) in member cluster(%s): %v", klog.KObj(o.desired), cluster, o.err))
		case o.wrote:
			wrote = true
			r.templateEvent(o.desired, corev1.EventTypeNormal, eventReasonSyncSucceed,
				fmt.Sprintf("Successfully applied resource(%s/%s) to cluster %s", o.desired.GetNamespace(), o.desired.GetName(), cluster))
		}
	}
	switch {
	case applyErr != nil:
		r.event(work, corev1.EventTypeWarning, eventReasonSyncFailed,
			fmt.Sprintf("Failed to sync work(%s/%s) to cluster(%s), err: %v", work.Namespace, work.Name, cluster, applyErr))
	case wrote:
		r.event(work, corev1.EventTypeNormal, eventReasonSyncSucceed,
			fmt.Sprintf("Sync work(%s/%s) to cluster(%s) successful.", work.Namespace, work.Name, cluster))
	}
}

// templateEvent records an event on the resource template a manifest was
// made from: its apiVersion, kind, namespace and name are the manifest's,
// its uid the manifest's resourcetemplate.karmada.io/uid annotation. A
// manifest without that annotation has no template to report to.
func (r *eventsReconciler) templateEvent(manifest *unstructured.Unstructured, eventType, reason, message string) {
	ref, err := templateRef(manifest)
	if err != nil {
		return
	}
	r.event(ref, eventType, reason, message)
}

// templateRef is the reference of the resource template of a manifest.
func templateRef(manifest *unstructured.Unstructured) (*corev1.ObjectReference, error) {
	uid := manifest.GetAnnotations()[workv1alpha2.ResourceTemplateUIDAnnotation]
	if uid == "" {
		return nil, errors.New("the manifest has no " + workv1alpha2.ResourceTemplateUIDAnnotation + " annotation")
	}
	return &corev1.ObjectReference{
		APIVersion: manifest.GetAPIVersion(), Kind: manifest.GetKind(),
		Namespace: manifest.GetNamespace(), Name: manifest.GetName(), UID: types.UID(uid),
	}, nil
}
