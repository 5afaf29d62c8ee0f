package storage

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"sigs.k8s.io/yaml"
)

// format is how a response is written.
type format int

const (
	formatJSON format = iota
	formatYAML
	formatTable
)

// tableGVKs are the Table versions a client may ask for.
var tableGVKs = []schema.GroupVersionKind{
	metav1.SchemeGroupVersion.WithKind("Table"),
	{Group: metav1.GroupName, Version: "v1beta1", Kind: "Table"},
}

// restrictions allow the Table transformation and watch streams.
type restrictions struct{}

func (restrictions) AllowsMediaTypeTransform(mimeType, mimeSubType string, target *schema.GroupVersionKind) bool {
	if target == nil {
		return true
	}
	return mimeType == "application" && mimeSubType == "json" && slices.Contains(tableGVKs, *target)
}
func (restrictions) AllowsServerVersion(string) bool  { return false }
func (restrictions) AllowsStreamSchema(s string) bool { return s == "watch" }

// mediaTypes are what the cache answers in: objects are kept as JSON, so
// JSON and YAML (and Tables in JSON); not protobuf or CBOR.
var mediaTypes = func() []runtime.SerializerInfo {
	var out []runtime.SerializerInfo
	for _, info := range serializer.NewCodecFactory(runtime.NewScheme()).SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeJSON || info.MediaType == runtime.ContentTypeYAML {
			out = append(out, info)
		}
	}
	return out
}()

// negotiate picks the response format from the Accept header.
func negotiate(req *http.Request) (format, *schema.GroupVersionKind, error) {
	opts, ok := negotiation.NegotiateMediaTypeOptions(req.Header.Get("Accept"), mediaTypes, restrictions{})
	if !ok {
		return 0, nil, notAcceptable(fmt.Sprintf("only %s and %s (and Tables in JSON) are served from the cache", runtime.ContentTypeJSON, runtime.ContentTypeYAML))
	}
	switch {
	case opts.Convert != nil:
		return formatTable, opts.Convert, nil
	case opts.Accepted.MediaType == runtime.ContentTypeYAML:
		return formatYAML, nil, nil
	}
	return formatJSON, nil, nil
}

// writeError answers with err as a Status.
func writeError(w http.ResponseWriter, err error) {
	status := apierrors.APIStatus(nil)
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s
	} else {
		status = apierrors.NewInternalError(err)
	}
	st := status.Status()
	st.APIVersion, st.Kind = "v1", "Status"
	writeJSON(w, int(st.Code), st)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	w.WriteHeader(code)
	_, _ = w.Write(raw)
}

// writeObject answers with one JSON document in the negotiated format.
func writeObject(w http.ResponseWriter, f format, raw []byte) {
	if f == formatYAML {
		out, err := yaml.JSONToYAML(raw)
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", runtime.ContentTypeYAML)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
		return
	}
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(raw)
}

// listKind is the kind of a list of kind.
func listKind(kind string) string { return kind + "List" }

// badRequest is a 400 with msg.
func badRequest(format string, args ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}

// apiVersion is the apiVersion field of a group version.
func apiVersion(gv schema.GroupVersion) string {
	return strings.TrimPrefix(gv.String(), "/")
}

// notAcceptable is a 406.
func notAcceptable(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable, Message: msg,
	}}
}
