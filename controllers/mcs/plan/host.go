package plan

import (
	"encoding/json"
	"github.com/flotilla-io/flotilla/controllers/internal/objectmeta"
	"maps"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// HostSliceSelector selects the host's copies of collected EndpointSlices
// (HostSlice) among the host's EndpointSlices: kept by the dispatch, with
// the member they come from. The host runs no EndpointSlice controller:
// nothing else makes slices with that endpointslice.kubernetes.io/managed-by
// there.
var HostSliceSelector = discoveryv1.LabelManagedBy + "=" + networkingv1alpha1.EndpointSliceDispatchControllerLabelValue + "," +
	networkingv1alpha1.EndpointSliceProvisionClusterAnnotation

// HostSlice returns the copy on the host (the control plane's API server,
// in the service's namespace) of c, a slice collected from a member
// exporting its service with a ServiceExport, as Karmada's endpointslice
// controller makes it: named imported-<cluster>-<slice>, a slice of
// derived-<service>, so that
//
//	kubectl get endpointslices -l kubernetes.io/service-name=derived-<service>
//
// lists them on the control plane. It is the slice the importing members
// get (the same labels, the provision-cluster annotation, the endpoints,
// ports and address type), and also:
//   - endpointslice.karmada.io/provision-cluster as a label, so that a
//     member's slices can be selected;
//   - endpointslice.kubernetes.io/managed-by set to the dispatch's value
//     (Karmada sets none on its copies; the value the importing members'
//     slices carry marks them as made by Flotilla, and selects them);
//   - work.karmada.io/namespace and /name naming the collected Work, as
//     Karmada's annotations do (not the Work's permanent id: it is the
//     server's, and Karmada's copies are found by it, these by their
//     labels);
//   - resourcetemplate.karmada.io/claimed-by=ServiceExport: the ServiceExport
//     machinery owns them, so the detector never propagates them as
//     templates, nor the dependencies distributor as a ServiceImport's
//     dependencies (Karmada does: Flotilla dispatches with Works instead).
func HostSlice(c Collected) (*discoveryv1.EndpointSlice, error) {
	service := c.Slice.GetLabels()[discoveryv1.LabelServiceName]
	obj := dispatchedSlice(c, names.ImportedEndpointSliceName(c.Cluster, c.Slice.GetName()), c.Slice.GetNamespace(),
		names.DerivedServiceName(service))
	labels := obj.GetLabels()
	labels[networkingv1alpha1.EndpointSliceProvisionClusterAnnotation] = c.Cluster
	labels[workv1alpha1.ManagedByKarmadaLabel] = workv1alpha1.ManagedByKarmadaLabelValue
	labels[workv1alpha2.ResourceTemplateClaimedByLabel] = multiclusterv1alpha1.ServiceExportKind
	obj.SetLabels(labels)
	annos := obj.GetAnnotations()
	annos[workv1alpha2.WorkNamespaceAnnotation] = names.ExecutionNamespace(c.Cluster)
	annos[workv1alpha2.WorkNameAnnotation] = names.WorkName(EndpointSliceKind, c.Slice.GetName(), c.Slice.GetNamespace())
	obj.SetAnnotations(annos)
	s := &discoveryv1.EndpointSlice{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, s); err != nil {
		return nil, err
	}
	return s, nil
}

// HostSliceOf tells which member's slices of which service s, one of the
// host's copies (HostSliceSelector), holds.
func HostSliceOf(s *discoveryv1.EndpointSlice) (cluster, service string, ok bool) {
	cluster = s.Labels[networkingv1alpha1.EndpointSliceProvisionClusterAnnotation]
	service, found := strings.CutPrefix(s.Labels[discoveryv1.LabelServiceName], names.DerivedServiceName(""))
	return cluster, service, found && cluster != "" && service != ""
}

// HostChanges are the writes that turn the host's copies of a member's
// slices of a service into the desired ones.
type HostChanges struct {
	Create []*discoveryv1.EndpointSlice
	Update []HostUpdate
	Delete []*discoveryv1.EndpointSlice
}

// HostUpdate is a stored copy and what it must become.
type HostUpdate struct {
	Stored, Desired *discoveryv1.EndpointSlice
}

// ReconcileHost decides the writes making stored, the host's copies of
// one member's slices of a service, desired: a desired copy is created
// when absent and updated when the stored one lacks one of its labels or
// annotations or has other endpoints or ports; a stored copy not desired
// is deleted, and so is one whose address type (immutable) changed: the
// next pass, queued by its deletion, creates it again. Copies being
// deleted are left to finish.
func ReconcileHost(desired, stored []*discoveryv1.EndpointSlice) HostChanges {
	byName := make(map[string]*discoveryv1.EndpointSlice, len(stored))
	for _, s := range stored {
		byName[s.Name] = s
	}
	var c HostChanges
	want := make(map[string]bool, len(desired))
	for _, d := range desired {
		want[d.Name] = true
		cur, ok := byName[d.Name]
		switch {
		case !ok:
			c.Create = append(c.Create, d)
		case cur.DeletionTimestamp != nil:
		case cur.AddressType != d.AddressType:
			c.Delete = append(c.Delete, cur)
		case hostDiffers(cur, d):
			c.Update = append(c.Update, HostUpdate{Stored: cur, Desired: d})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if cur := byName[name]; !want[name] && cur.DeletionTimestamp == nil {
			c.Delete = append(c.Delete, cur)
		}
	}
	return c
}

// hostDiffers tells whether stored lacks a label or annotation of
// desired, or has other endpoints or ports (nil and empty alike).
func hostDiffers(stored, desired *discoveryv1.EndpointSlice) bool {
	if !objectmeta.Covers(stored, desired) {
		return true
	}
	return !equality.Semantic.DeepEqual(stored.Endpoints, desired.Endpoints) || !equality.Semantic.DeepEqual(stored.Ports, desired.Ports)
}

// HostPatch is the merge patch turning a stored copy into desired: labels
// and annotations merged, endpoints and ports replaced.
func HostPatch(desired *discoveryv1.EndpointSlice) ([]byte, error) {
	endpoints := desired.Endpoints
	if endpoints == nil {
		// Replaced by none, not removed.
		endpoints = []discoveryv1.Endpoint{}
	}
	return json.Marshal(map[string]any{
		"metadata":  map[string]any{"labels": desired.Labels, "annotations": desired.Annotations},
		"endpoints": endpoints,
		"ports":     desired.Ports,
	})
}
