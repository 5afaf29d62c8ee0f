package mutation

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// MutateWork applies the works mutating webhook to w, on create and update
// alike (create is accepted for symmetry with the binding functions):
//   - label work.karmada.io/permanent-id is set to a new UUID if absent;
//   - each manifest is pruned (PruneManifest) and, unless the Work carries
//     propagation.karmada.io/instruction=suppressed, gets the Work's
//     permanent-id label and the managed-annotations and managed-labels
//     annotations listing, sorted, its annotation keys (always including
//     those two) and its label keys.
//
// Manifests are re-encoded as JSON in Raw (an Object-only manifest is
// encoded first). A manifest that is not a JSON object with apiVersion and
// kind is left untouched for validation to reject. Running MutateWork again
// on its output changes nothing.
func MutateWork(w *workv1alpha1.Work, create bool) error {
	id, err := ensurePermanentID(&w.ObjectMeta, workv1alpha2.WorkPermanentIDLabel)
	if err != nil {
		return err
	}
	suppressed := w.Labels[workv1alpha1.PropagationInstruction] == workv1alpha1.PropagationInstructionSuppressed
	for i := range w.Spec.Workload.Manifests {
		m := &w.Spec.Workload.Manifests[i]
		obj, ok := decodeManifest(&m.RawExtension)
		if !ok {
			continue
		}
		if err := PruneManifest(obj); err != nil {
			return fmt.Errorf("pruning spec.workload.manifests[%d]: %w", i, err)
		}
		if !suppressed {
			labelManifest(obj, id)
		}
		raw, err := obj.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encoding spec.workload.manifests[%d]: %w", i, err)
		}
		m.RawExtension = runtime.RawExtension{Raw: raw}
	}
	return nil
}

// MutateResourceBinding applies the resourcebindings mutating webhook: on
// create, label resourcebinding.karmada.io/permanent-id is set to a new UUID
// if absent. Updates are left alone.
func MutateResourceBinding(rb *workv1alpha2.ResourceBinding, create bool) error {
	if !create {
		return nil
	}
	_, err := ensurePermanentID(&rb.ObjectMeta, workv1alpha2.ResourceBindingPermanentIDLabel)
	return err
}

// MutateClusterResourceBinding applies the clusterresourcebindings mutating
// webhook: on create, label clusterresourcebinding.karmada.io/permanent-id is
// set to a new UUID if absent. Updates are left alone.
func MutateClusterResourceBinding(crb *workv1alpha2.ClusterResourceBinding, create bool) error {
	if !create {
		return nil
	}
	_, err := ensurePermanentID(&crb.ObjectMeta, workv1alpha2.ClusterResourceBindingPermanentIDLabel)
	return err
}

// ensurePermanentID sets label key to a new UUID unless it has a value, and
// returns the label's value.
func ensurePermanentID(meta *metav1.ObjectMeta, key string) (string, error) {
	if id := meta.Labels[key]; id != "" {
		return id, nil
	}
	id, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("generating %s: %w", key, err)
	}
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	meta.Labels[key] = id.String()
	return meta.Labels[key], nil
}

// decodeManifest reads a manifest as an object, reporting false if it is not
// a JSON object with apiVersion and kind.
func decodeManifest(raw *runtime.RawExtension) (*unstructured.Unstructured, bool) {
	data := raw.Raw
	if len(data) == 0 && raw.Object != nil {
		var err error
		if data, err = json.Marshal(raw.Object); err != nil {
			return nil, false
		}
	}
	if len(data) == 0 {
		return nil, false
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		return nil, false
	}
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		return nil, false
	}
	return obj, true
}

// labelManifest records the managed annotation keys, adds the Work's
// permanent id label, then records the managed label keys, in the order the
// webhook does so that managed-labels includes the permanent id.
func labelManifest(obj *unstructured.Unstructured, workID string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotationKeys := []string{workv1alpha2.ManagedAnnotation, workv1alpha2.ManagedLabels}
	for k := range annotations {
		if k != workv1alpha2.ManagedAnnotation && k != workv1alpha2.ManagedLabels {
			annotationKeys = append(annotationKeys, k)
		}
	}
	annotations[workv1alpha2.ManagedAnnotation] = sortedJoin(annotationKeys)

	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[workv1alpha2.WorkPermanentIDLabel] = workID
	obj.SetLabels(labels)

	labelKeys := make([]string, 0, len(labels))
	for k := range labels {
		labelKeys = append(labelKeys, k)
	}
	annotations[workv1alpha2.ManagedLabels] = sortedJoin(labelKeys)
	obj.SetAnnotations(annotations)
}

// sortedJoin sorts keys and joins them with commas.
func sortedJoin(keys []string) string {
	sort.Strings(keys)
	return strings.Join(keys, ",")
}
