package mutation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kinds pruned specially.
var (
	deploymentKind     = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	jobKind            = schema.GroupKind{Group: "batch", Kind: "Job"}
	serviceKind        = schema.GroupKind{Kind: "Service"}
	serviceAccountKind = schema.GroupKind{Kind: "ServiceAccount"}
	secretKind         = schema.GroupKind{Kind: "Secret"}
	pvcKind            = schema.GroupKind{Kind: "PersistentVolumeClaim"}
)

// metadataFieldsToPrune are the metadata fields the control plane's API
// server fills in, which must not be carried to a member cluster.
var metadataFieldsToPrune = []string{
	"creationTimestamp",
	"deletionTimestamp",
	"deletionGracePeriodSeconds",
	"generation",
	"managedFields",
	"resourceVersion",
	"selfLink",
	"uid",
	"ownerReferences",
	"finalizers",
}

// Job labels the API server generates for a Job without a manual selector,
// in their legacy and their batch.kubernetes.io forms.
var (
	jobSelectorLabels = []string{"controller-uid", "batch.kubernetes.io/controller-uid"}
	jobTemplateLabels = []string{"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"}
)

// PruneManifest removes from obj what the control plane's API server and
// controllers filled in and must not be applied to a member cluster, the
// resource interpreter's "Prune" operation:
//   - metadata creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds,
//     generation, managedFields, resourceVersion, selfLink, uid,
//     ownerReferences and finalizers, and the whole status;
//   - apps Deployment: the deployment.kubernetes.io/revision and
//     deployment.kubernetes.io/revision-history annotations;
//   - batch Job: spec.ttlSecondsAfterFinished (the member's TTL controller
//     would delete the Job, which the control plane would then re-create),
//     and, unless spec.manualSelector is true, the generated controller-uid
//     and job-name labels from spec.selector.matchLabels and the pod template;
//   - ServiceAccount: secrets named <name>-token-*;
//   - Service: spec.clusterIP and spec.clusterIPs unless clusterIP is "None"
//     (headless);
//   - Secret of type kubernetes.io/service-account-token: the
//     kubernetes.io/service-account.uid annotation and data;
//   - PersistentVolumeClaim: the volume.kubernetes.io/selected-node annotation.
//
// It returns an error only if a field it edits has an unexpected type.
func PruneManifest(obj *unstructured.Unstructured) error {
	for _, f := range metadataFieldsToPrune {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(obj.Object, "status")

	switch obj.GroupVersionKind().GroupKind() {
	case deploymentKind:
		removeAnnotations(obj, "deployment.kubernetes.io/revision", "deployment.kubernetes.io/revision-history")
	case jobKind:
		unstructured.RemoveNestedField(obj.Object, "spec", "ttlSecondsAfterFinished")
		manual, _, err := unstructured.NestedBool(obj.Object, "spec", "manualSelector")
		if err != nil {
			return err
		}
		if !manual {
			if err := removeNestedStringMapKeys(obj, jobSelectorLabels, "spec", "selector", "matchLabels"); err != nil {
				return err
			}
			// A selector left empty is one the API server generated: the
			// member generates its own, and rejects a Job that brings one.
			if sel, found, _ := unstructured.NestedMap(obj.Object, "spec", "selector"); found {
				labels, _ := sel["matchLabels"].(map[string]any)
				exprs, _ := sel["matchExpressions"].([]any)
				if len(labels) == 0 && len(exprs) == 0 {
					unstructured.RemoveNestedField(obj.Object, "spec", "selector")
				}
			}
			if err := removeNestedStringMapKeys(obj, jobTemplateLabels, "spec", "template", "metadata", "labels"); err != nil {
				return err
			}
		}
	case serviceAccountKind:
		return pruneServiceAccountTokens(obj)
	case serviceKind:
		clusterIP, found, err := unstructured.NestedString(obj.Object, "spec", "clusterIP")
		if err != nil {
			return err
		}
		if found && clusterIP != "None" {
			unstructured.RemoveNestedField(obj.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(obj.Object, "spec", "clusterIPs")
		}
	case secretKind:
		secretType, _, err := unstructured.NestedString(obj.Object, "type")
		if err != nil {
			return err
		}
		if secretType == "kubernetes.io/service-account-token" {
			removeAnnotations(obj, "kubernetes.io/service-account.uid")
			unstructured.RemoveNestedField(obj.Object, "data")
		}
	case pvcKind:
		removeAnnotations(obj, "volume.kubernetes.io/selected-node")
	}
	return nil
}

// removeAnnotations deletes keys from the annotations of obj, and the
// annotations themselves if none is left.
func removeAnnotations(obj *unstructured.Unstructured, keys ...string) {
	annotations := obj.GetAnnotations()
	if len(annotations) == 0 {
		return
	}
	for _, k := range keys {
		delete(annotations, k)
	}
	if len(annotations) == 0 {
		annotations = nil // drop the emptied map rather than leave "annotations": {}
	}
	obj.SetAnnotations(annotations)
}

// removeNestedStringMapKeys deletes keys from the string map at fields, if
// there is one; an emptied map is kept empty rather than removed.
func removeNestedStringMapKeys(obj *unstructured.Unstructured, keys []string, fields ...string) error {
	m, found, err := unstructured.NestedStringMap(obj.Object, fields...)
	if err != nil || !found {
		return err
	}
	for _, k := range keys {
		delete(m, k)
	}
	return unstructured.SetNestedStringMap(obj.Object, m, fields...)
}

// pruneServiceAccountTokens drops the token Secrets the control plane
// generated for a ServiceAccount (<name>-token-*) from its secrets list.
func pruneServiceAccountTokens(obj *unstructured.Unstructured) error {
	secrets, found, err := unstructured.NestedSlice(obj.Object, "secrets")
	if err != nil || !found || len(secrets) == 0 {
		return err
	}
	prefix := obj.GetName() + "-token-"
	kept := make([]any, 0, len(secrets))
	for i, s := range secrets {
		ref, ok := s.(map[string]any)
		if !ok {
			return fmt.Errorf("secrets[%d]: expected an object, got %T", i, s)
		}
		if name, _ := ref["name"].(string); strings.HasPrefix(name, prefix) {
			continue
		}
		kept = append(kept, s)
	}
	return unstructured.SetNestedSlice(obj.Object, kept, "secrets")
}
