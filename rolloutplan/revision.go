package rolloutplan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// hashLen is how many hex digits of the content's SHA-256 a hash keeps.
const hashLen = 10

// Content is what a revision keeps of a template: apiVersion, kind, the
// labels, annotations and generation, and every other field but metadata
// and status. The result shares no maps with obj.
func Content(obj *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for k, v := range obj.Object {
		if k == "metadata" || k == "status" {
			continue
		}
		out[k] = runtime.DeepCopyJSONValue(v)
	}
	meta := map[string]any{}
	if l := obj.GetLabels(); len(l) > 0 {
		meta["labels"] = stringMap(l)
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		meta["annotations"] = stringMap(a)
	}
	if g := obj.GetGeneration(); g != 0 {
		meta["generation"] = g
	}
	if len(meta) > 0 {
		out["metadata"] = meta
	}
	return out
}

// Hash identifies a template's content: the SHA-256 of its labels,
// annotations and every field but apiVersion, kind, metadata and status.
// The generation is left out: it counts writes, not content; so is
// kubectl's last-applied-configuration, a copy of content already hashed
// (undo keeps the live one, as kubectl rollout undo does).
func Hash(obj *unstructured.Unstructured) string {
	c := map[string]any{}
	for k, v := range obj.Object {
		if k == "metadata" || k == "status" || k == "apiVersion" || k == "kind" {
			continue
		}
		c[k] = v
	}
	c["labels"] = obj.GetLabels()
	annotations := obj.GetAnnotations()
	if _, ok := annotations[corev1.LastAppliedConfigAnnotation]; ok {
		annotations = maps.Clone(annotations)
		delete(annotations, corev1.LastAppliedConfigAnnotation)
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	c["annotations"] = annotations
	// encoding/json writes map keys sorted: the same content, the same bytes.
	// Unstructured content always marshals.
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:hashLen]
}

// Held returns live as it was at a revision whose Content is content: the
// live object's metadata (name, UID, claims) with the revision's labels,
// annotations and generation, and the revision's fields in place of the
// live ones. live is not changed.
func Held(live *unstructured.Unstructured, content map[string]any) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range content {
		if k == "metadata" {
			continue
		}
		out.Object[k] = runtime.DeepCopyJSONValue(v)
	}
	out.Object["metadata"] = runtime.DeepCopyJSONValue(live.Object["metadata"])
	if s, ok := live.Object["status"]; ok {
		out.Object["status"] = runtime.DeepCopyJSONValue(s)
	}
	meta, _ := content["metadata"].(map[string]any)
	labels, _, _ := unstructured.NestedStringMap(meta, "labels")
	annotations, _, _ := unstructured.NestedStringMap(meta, "annotations")
	generation, _, _ := unstructured.NestedInt64(meta, "generation")
	out.SetLabels(labels)
	out.SetAnnotations(annotations)
	out.SetGeneration(generation)
	return out
}

// ParseRevisions reads the revisions annotation of a binding:
// "<cluster>=<hash>,...". Malformed entries are skipped.
func ParseRevisions(s string) map[string]string {
	out := map[string]string{}
	for _, e := range strings.Split(s, ",") {
		c, h, ok := strings.Cut(strings.TrimSpace(e), "=")
		if ok && c != "" && h != "" {
			out[c] = h
		}
	}
	return out
}

// FormatRevisions writes the revisions annotation, in cluster order.
func FormatRevisions(m map[string]string) string {
	clusters := make([]string, 0, len(m))
	for c := range m {
		clusters = append(clusters, c)
	}
	slices.Sort(clusters)
	var b strings.Builder
	for i, c := range clusters {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c)
		b.WriteByte('=')
		b.WriteString(m[c])
	}
	return b.String()
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
