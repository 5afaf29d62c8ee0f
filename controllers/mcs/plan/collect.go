package plan

import (
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// EndpointSliceKind is the kind of the objects collected and imported.
const EndpointSliceKind = "EndpointSlice"

// Collectable tells whether a member EndpointSlice with labels is one of
// service's that is collected: not one Flotilla dispatched there (those
// belong to derived Services, and are never collected back), as Karmada
// tells them by their endpointslice.kubernetes.io/managed-by. (The
// member's EndpointSlice controller copies the Service's labels onto its
// slices: a propagated Service's karmada.io/managed says nothing of them.)
func Collectable(labels map[string]string, service string) bool {
	return labels[discoveryv1.LabelServiceName] == service && service != "" &&
		labels[discoveryv1.LabelManagedBy] != networkingv1alpha1.EndpointSliceDispatchControllerLabelValue
}

// keptMetadata are the metadata fields of a member EndpointSlice a Work
// carries: the rest is the member's (uid, resourceVersion, owner
// references to its Service) and means nothing elsewhere.
var keptMetadata = []string{"name", "namespace", "labels", "annotations"}

// CollectedWork returns the Work holding slice, collected from cluster, in
// the cluster's execution namespace: named as Karmada names it, labelled
// with the service, kept by managers (ServiceExport, MultiClusterService:
// at least one), and never applied (suppressed and suspended: the slice is
// the member's own).
func CollectedWork(cluster string, slice *unstructured.Unstructured, managers ...string) (*workv1alpha1.Work, error) {
	if len(managers) == 0 {
		return nil, fmt.Errorf("collecting EndpointSlice %s/%s: no manager", slice.GetNamespace(), slice.GetName())
	}
	obj := trimmed(slice)
	raw, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	w := &workv1alpha1.Work{}
	w.Name = names.WorkName(EndpointSliceKind, slice.GetName(), slice.GetNamespace())
	w.Namespace = names.ExecutionNamespace(cluster)
	w.Labels = map[string]string{
		networkingv1alpha1.EndpointSliceNamespaceLabel:     slice.GetNamespace(),
		networkingv1alpha1.EndpointSliceNameLabel:          slice.GetLabels()[discoveryv1.LabelServiceName],
		networkingv1alpha1.EndpointSliceWorkManagedByLabel: joinManagers(managers),
		workv1alpha1.PropagationInstruction:                workv1alpha1.PropagationInstructionSuppressed,
	}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	w.Spec.SuspendDispatching = ptr.To(true)
	return w, nil
}

// trimmed is a copy of slice with only its kept metadata.
func trimmed(slice *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range slice.Object {
		if k != "metadata" {
			out.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	md := map[string]any{}
	if in, ok := slice.Object["metadata"].(map[string]any); ok {
		for _, k := range keptMetadata {
			if v, ok := in[k]; ok {
				md[k] = runtime.DeepCopyJSONValue(v)
			}
		}
	}
	out.Object["metadata"] = md
	return out
}

// Collected is an EndpointSlice collected from a member.
type Collected struct {
	Cluster string
	Slice   *unstructured.Unstructured
}

// IsCollected tells whether w holds an EndpointSlice collected from the
// member of its execution namespace (by manager, when it is not empty):
// Works made for a consuming member name the member the endpoints come
// from, collected ones do not.
func IsCollected(w *workv1alpha1.Work, manager string) bool {
	if w.Annotations[networkingv1alpha1.EndpointSliceProvisionClusterAnnotation] != "" {
		return false
	}
	if manager != "" {
		return ManagedBy(w, manager)
	}
	return ManagedBy(w, networkingv1alpha1.ManagedByServiceExport) || ManagedBy(w, networkingv1alpha1.ManagedByMultiClusterService)
}

// CollectedFrom reads the EndpointSlice a Work collected for manager:
// false for a Work that is not such a collected one (not in an execution
// namespace, not kept by manager, made for a consuming member, or being
// deleted) or whose manifest is not an EndpointSlice.
func CollectedFrom(w *workv1alpha1.Work, manager string) (Collected, bool) {
	cluster, ok := names.ClusterOf(w.Namespace)
	if !ok || w.DeletionTimestamp != nil || !IsCollected(w, manager) || len(w.Spec.Workload.Manifests) != 1 {
		return Collected{}, false
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil || obj.GetKind() != EndpointSliceKind {
		return Collected{}, false
	}
	return Collected{Cluster: cluster, Slice: obj}, true
}
