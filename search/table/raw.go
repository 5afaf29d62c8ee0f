package table

import (
	"bytes"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// withTypeMeta returns raw, the JSON of an object of kind gvk, with the
// apiVersion and kind fields that typeMeta (the ones raw has) lacks added in
// front, as kube-apiserver encodes a row's object. raw is returned unchanged
// when it has both or is not a JSON object.
func withTypeMeta(raw []byte, gvk schema.GroupVersionKind, typeMeta metav1.TypeMeta) []byte {
	if typeMeta.APIVersion != "" && typeMeta.Kind != "" {
		return raw
	}
	body := bytes.TrimLeft(raw, " \t\r\n")
	if len(body) == 0 || body[0] != '{' {
		return raw
	}
	body = body[1:]

	out := make([]byte, 0, len(raw)+len(gvk.Group)+len(gvk.Version)+len(gvk.Kind)+32)
	out = append(out, '{')
	sep := false
	if typeMeta.APIVersion == "" {
		out = append(out, `"apiVersion":`...)
		out = strconv.AppendQuote(out, gvk.GroupVersion().String())
		sep = true
	}
	if typeMeta.Kind == "" {
		if sep {
			out = append(out, ',')
		}
		out = append(out, `"kind":`...)
		out = strconv.AppendQuote(out, gvk.Kind)
	}
	if rest := bytes.TrimLeft(body, " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, body...)
}

// objectError wraps err, met while doing what to the index-th object of objs
// (raw is its JSON), with the kind, the index and, when the metadata can be
// read, the namespace and name of the object.
func objectError(gvk schema.GroupVersionKind, raw []byte, index int, what string, err error) error {
	var object struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if unmarshal(raw, &object) != nil || object.Metadata.Name == "" {
		return fmt.Errorf("%s %s (item %d): %w", what, gvk.Kind, index, err)
	}
	name := object.Metadata.Name
	if object.Metadata.Namespace != "" {
		name = object.Metadata.Namespace + "/" + name
	}
	return fmt.Errorf("%s %s %q (item %d): %w", what, gvk.Kind, name, index, err)
}
