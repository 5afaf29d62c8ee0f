package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
)

// Exported is a member's Service exported with a ServiceExport, as the
// conditions see it: its ports (name, number, protocol).
type Exported struct {
	Cluster string
	Ports   []corev1.ServicePort
}

// ExportConditions returns the conditions of cluster's ServiceExport of
// namespace/name: Valid (the member has the Service: own is nil when it has
// none) and Conflict (a port of the same name has another number or
// protocol in one of the other exporting members).
func ExportConditions(cluster, namespace, name string, own *Exported, others []Exported) []metav1.Condition {
	if own == nil {
		return []metav1.Condition{{Type: multiclusterv1alpha1.ServiceExportValid, Status: metav1.ConditionFalse,
			Reason:  multiclusterv1alpha1.ServiceExportReasonNoService,
			Message: fmt.Sprintf("Service %s/%s does not exist in cluster %s: nothing is exported", namespace, name, cluster)}}
	}
	valid := metav1.Condition{Type: multiclusterv1alpha1.ServiceExportValid, Status: metav1.ConditionTrue,
		Reason: multiclusterv1alpha1.ServiceExportReasonExported, Message: "Service is exported"}
	sorted := append([]Exported(nil), others...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Cluster < sorted[j].Cluster })
	var conflicts []string
	for _, p := range own.Ports {
		for _, o := range sorted {
			if o.Cluster == cluster {
				continue
			}
			for _, q := range o.Ports {
				if q.Name == p.Name && (q.Port != p.Port || protocol(q) != protocol(p)) {
					conflicts = append(conflicts, fmt.Sprintf("port %q is %d/%s in %s and %d/%s in %s",
						p.Name, p.Port, protocol(p), cluster, q.Port, protocol(q), o.Cluster))
				}
			}
		}
	}
	conflict := metav1.Condition{Type: multiclusterv1alpha1.ServiceExportConflict, Status: metav1.ConditionFalse,
		Reason: multiclusterv1alpha1.ServiceExportReasonNoConflicts, Message: "The ports agree with the other exporting clusters"}
	if len(conflicts) > 0 {
		conflict.Status, conflict.Reason = metav1.ConditionTrue, multiclusterv1alpha1.ServiceExportReasonPortConflict
		conflict.Message = strings.Join(conflicts, "; ")
	}
	return []metav1.Condition{valid, conflict}
}

// protocol is p's protocol, TCP when unset (the API server's default).
func protocol(p corev1.ServicePort) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

// ServicePorts reads the ports of a Service object's spec.
func ServicePorts(spec map[string]any) []corev1.ServicePort {
	var s corev1.ServiceSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &s); err != nil {
		return nil
	}
	return s.Ports
}

// MergeConditions sets want over cur: merged is cur with each condition of
// want that says something else (status, reason, message, observed
// generation) set (its transition time kept when the status is the
// same), changed those conditions; nothing changed, nothing is to write.
func MergeConditions(cur, want []metav1.Condition) (merged, changed []metav1.Condition) {
	merged = slices.Clone(cur)
	for _, c := range want {
		if old := meta.FindStatusCondition(merged, c.Type); old != nil && old.Status == c.Status && old.Reason == c.Reason &&
			old.Message == c.Message && old.ObservedGeneration == c.ObservedGeneration {
			continue
		}
		meta.SetStatusCondition(&merged, c)
		changed = append(changed, c)
	}
	return merged, changed
}
