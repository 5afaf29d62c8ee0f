package execution

import (
	"errors"

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

// recordApplyEvents records what an apply did, on the Work and on the
// resource template of each manifest: a success only when something was
// written (an apply that found everything in place says nothing), a
// failure every time.
func (c *Controller) recordApplyEvents(work *workv1alpha1.Work, cluster string, outcomes []outcome, applyErr error) {
	wrote := false
	for _, o := range outcomes {
		if o.desired == nil {
			continue
		}
		switch {
		case o.err != nil:
			c.templateEventf(o.desired, corev1.EventTypeWarning, eventReasonSyncFailed,
				"Failed to create or update resource(%s) in member cluster(%s): %v", klog.KObj(o.desired), cluster, o.err)
		case o.wrote:
			wrote = true
			c.templateEventf(o.desired, corev1.EventTypeNormal, eventReasonSyncSucceed,
				"Successfully applied resource(%s/%s) to cluster %s", o.desired.GetNamespace(), o.desired.GetName(), cluster)
		}
	}
	switch {
	case applyErr != nil:
		c.recorder.Eventf(work, corev1.EventTypeWarning, eventReasonSyncFailed,
			"Failed to sync work(%s/%s) to cluster(%s), err: %v", work.Namespace, work.Name, cluster, applyErr)
	case wrote:
		c.recorder.Eventf(work, corev1.EventTypeNormal, eventReasonSyncSucceed,
			"Sync work(%s/%s) to cluster(%s) successful.", work.Namespace, work.Name, cluster)
	}
}

// templateEventf records an event on the resource template a manifest was
// made from: its apiVersion, kind, namespace and name are the manifest's,
// its uid the manifest's resourcetemplate.karmada.io/uid annotation. A
// manifest without that annotation has no template to report to.
func (c *Controller) templateEventf(manifest *unstructured.Unstructured, eventType, reason, format string, args ...any) {
	ref, err := templateRef(manifest)
	if err != nil {
		return
	}
	c.recorder.Eventf(ref, eventType, reason, format, args...)
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
