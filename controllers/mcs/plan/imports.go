package plan

import (
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// ServiceKind is the kind of the derived Service.
const ServiceKind = "Service"

// ServiceImport is what an import reads of a ServiceImport.
type ServiceImport struct {
	Namespace, Name string
	// Type is ClusterSetIP or Headless.
	Type string
	// Ports have a name, protocol, appProtocol and port: the fields the
	// MCS API's ServicePort shares with the core one.
	Ports                 []corev1.ServicePort
	SessionAffinity       corev1.ServiceAffinity
	SessionAffinityConfig *corev1.SessionAffinityConfig
}

// ParseServiceImport reads a ServiceImport object.
func ParseServiceImport(u *unstructured.Unstructured) (ServiceImport, error) {
	si := ServiceImport{Namespace: u.GetNamespace(), Name: u.GetName()}
	spec, ok := u.Object["spec"].(map[string]any)
	if !ok {
		return si, fmt.Errorf("ServiceImport %s/%s has no spec", si.Namespace, si.Name)
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return si, err
	}
	var s struct {
		Type                  string                        `json:"type"`
		Ports                 []corev1.ServicePort          `json:"ports"`
		SessionAffinity       corev1.ServiceAffinity        `json:"sessionAffinity"`
		SessionAffinityConfig *corev1.SessionAffinityConfig `json:"sessionAffinityConfig"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return si, fmt.Errorf("ServiceImport %s/%s: %w", si.Namespace, si.Name, err)
	}
	si.Type, si.SessionAffinity, si.SessionAffinityConfig = s.Type, s.SessionAffinity, s.SessionAffinityConfig
	for _, p := range s.Ports {
		// Only the fields the MCS API defines.
		si.Ports = append(si.Ports, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, AppProtocol: p.AppProtocol, Port: p.Port})
	}
	return si, nil
}

// ImportWorks returns the Works giving importer what si imports: the
// derived Service derived-<name> (ClusterSetIP imports only, as Karmada),
// a ClusterIP Service without selector with si's ports, and each collected
// EndpointSlice of the service as imported-<cluster>-<slice>, labelled
// with the derived Service. Every exporting member's endpoints are
// imported, the importer's own included: the derived Service stands for
// the service of the whole cluster set (Karmada's ServiceExport path).
func ImportWorks(importer string, si ServiceImport, collected []Collected) ([]*workv1alpha1.Work, error) {
	ns := names.ExecutionNamespace(importer)
	derived := names.DerivedServiceName(si.Name)
	var out []*workv1alpha1.Work
	if si.Type == multiclusterv1alpha1.ClusterSetIP {
		svc := map[string]any{
			"apiVersion": "v1", "kind": ServiceKind,
			"metadata": map[string]any{"name": derived, "namespace": si.Namespace},
			"spec":     derivedSpec(si),
		}
		w, err := dispatchedWork(ns, si.Namespace, si.Name, networkingv1alpha1.ManagedByServiceImport, &unstructured.Unstructured{Object: svc}, "")
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	for _, c := range sortedCollected(collected) {
		obj := dispatchedSlice(c, names.ImportedEndpointSliceName(c.Cluster, c.Slice.GetName()), si.Namespace, derived)
		w, err := dispatchedWork(ns, si.Namespace, si.Name, networkingv1alpha1.ManagedByServiceImport, obj, c.Cluster)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// sortedCollected returns a copy of collected sorted by cluster, then by
// slice name: the Works come out in the same order every time.
func sortedCollected(collected []Collected) []Collected {
	sorted := append([]Collected(nil), collected...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Cluster != sorted[j].Cluster {
			return sorted[i].Cluster < sorted[j].Cluster
		}
		return sorted[i].Slice.GetName() < sorted[j].Slice.GetName()
	})
	return sorted
}

// dispatchedSlice is c's EndpointSlice as a consuming member gets it: named
// name in namespace, a slice of Service service there, kept by the
// dispatch (the member's EndpointSlice controllers leave it alone) and
// annotated with the member it comes from; only its endpoints, ports and
// address type are copied.
func dispatchedSlice(c Collected, name, namespace, service string) *unstructured.Unstructured {
	obj := map[string]any{
		"apiVersion": discoveryv1.SchemeGroupVersion.String(), "kind": EndpointSliceKind,
		"metadata": map[string]any{
			"name": name, "namespace": namespace,
			"labels": map[string]any{
				discoveryv1.LabelServiceName: service,
				discoveryv1.LabelManagedBy:   networkingv1alpha1.EndpointSliceDispatchControllerLabelValue,
			},
			"annotations": map[string]any{networkingv1alpha1.EndpointSliceProvisionClusterAnnotation: c.Cluster},
		},
	}
	for _, k := range []string{"addressType", "endpoints", "ports"} {
		if v, ok := c.Slice.Object[k]; ok {
			obj[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	return &unstructured.Unstructured{Object: obj}
}

// derivedSpec is the spec of the derived Service: a ClusterIP Service
// without selector, with the ports and session affinity of si. Only set
// fields are written: the member's API server fills in the defaults
// (protocol, targetPort), and an explicit zero would differ from them.
func derivedSpec(si ServiceImport) map[string]any {
	ports := make([]any, 0, len(si.Ports))
	for _, p := range si.Ports {
		port := map[string]any{"port": int64(p.Port)}
		if p.Name != "" {
			port["name"] = p.Name
		}
		if p.Protocol != "" {
			port["protocol"] = string(p.Protocol)
		}
		if p.AppProtocol != nil {
			port["appProtocol"] = *p.AppProtocol
		}
		ports = append(ports, port)
	}
	spec := map[string]any{"type": string(corev1.ServiceTypeClusterIP), "ports": ports}
	if si.SessionAffinity != "" {
		spec["sessionAffinity"] = string(si.SessionAffinity)
	}
	if c := si.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
		spec["sessionAffinityConfig"] = map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(*c.ClientIP.TimeoutSeconds)}}
	}
	return spec
}

// dispatchedWork wraps obj, bound for the consuming member whose execution
// namespace is ns, in its Work: named as Karmada names Works, labelled with
// service svcNamespace/svcName and kept by manager; the object is labelled as
// Flotilla's and annotated with its Work, as the binding controller does
// the objects it propagates. provider, when set, is the member the
// endpoints come from.
func dispatchedWork(ns, svcNamespace, svcName, manager string, obj *unstructured.Unstructured, provider string) (*workv1alpha1.Work, error) {
	name := names.WorkName(obj.GetKind(), obj.GetName(), obj.GetNamespace())
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[workv1alpha1.ManagedByKarmadaLabel] = workv1alpha1.ManagedByKarmadaLabelValue
	obj.SetLabels(labels)
	annos := obj.GetAnnotations()
	if annos == nil {
		annos = map[string]string{}
	}
	annos[workv1alpha2.WorkNameAnnotation] = name
	annos[workv1alpha2.WorkNamespaceAnnotation] = ns
	obj.SetAnnotations(annos)
	raw, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	w := &workv1alpha1.Work{}
	w.Name, w.Namespace = name, ns
	w.Labels = map[string]string{
		networkingv1alpha1.EndpointSliceNamespaceLabel:     svcNamespace,
		networkingv1alpha1.EndpointSliceNameLabel:          svcName,
		networkingv1alpha1.EndpointSliceWorkManagedByLabel: manager,
	}
	if provider != "" {
		w.Annotations = map[string]string{networkingv1alpha1.EndpointSliceProvisionClusterAnnotation: provider}
	}
	w.Finalizers = []string{workv1alpha1.ExecutionControllerFinalizer}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	return w, nil
}
