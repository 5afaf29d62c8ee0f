package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
)

const (
	// contextVersion is the only ResourceInterpreterContext version spoken.
	contextVersion = "v1alpha1"
	// contextKind is the kind of the body exchanged with webhooks.
	contextKind = "ResourceInterpreterContext"
	// defaultTimeout bounds a call when the webhook sets no timeoutSeconds.
	defaultTimeout = 10 * time.Second
	// maxResponseBytes bounds what is read from a webhook. A response carries
	// at most a patch of one object, and objects are far smaller.
	maxResponseBytes = 8 << 20
)

// errNoWebhook is returned by operations called for a kind no webhook handles.
var errNoWebhook = errors.New("no interpreter webhook")

// result is a successful webhook answer and what it answers.
type result struct {
	// webhook is the name of the webhook that answered.
	webhook string
	// op is the operation asked.
	op interpreter.Operation
	// object is the JSON of the object sent, which patches apply to.
	object   []byte
	response *configv1alpha1.ResourceInterpreterResponse
}

// errorf returns an error naming the webhook and operation of r.
func (r *result) errorf(format string, args ...any) error {
	return fmt.Errorf("webhook %q: %s: "+format, append([]any{r.webhook, r.op}, args...)...)
}

// interpret calls the webhook handling op for obj's kind, with a request for
// obj completed by fill (nil when there is nothing to add), and returns its
// successful answer. It returns an error wrapping errNoWebhook when no
// webhook handles op for the kind.
func (i *Interpreter) interpret(op interpreter.Operation, obj *unstructured.Unstructured,
	fill func(*configv1alpha1.ResourceInterpreterRequest) error) (*result, error) {
	if obj == nil {
		return nil, fmt.Errorf("%s: nil object", op)
	}
	gvk := obj.GroupVersionKind()
	h, err := i.find(gvk, op)
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("%w for %s of %s", errNoWebhook, op, gvk)
	}
	name := h.webhook.Name
	raw, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("webhook %q: %s: encoding %s %s: %w", name, op, gvk.Kind, obj.GetName(), err)
	}
	req := &configv1alpha1.ResourceInterpreterRequest{
		UID:       uuid.NewUUID(),
		Kind:      metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Name:      obj.GetName(),
		Namespace: obj.GetNamespace(),
		Operation: configv1alpha1.InterpreterOperation(op),
		Object:    runtime.RawExtension{Raw: raw},
	}
	if fill != nil {
		if err := fill(req); err != nil {
			return nil, fmt.Errorf("webhook %q: %s: %w", name, op, err)
		}
	}
	resp, err := i.call(h, req)
	if err != nil {
		return nil, fmt.Errorf("webhook %q: %s: %w", name, op, err)
	}
	return &result{webhook: name, op: op, object: raw, response: resp}, nil
}

// call posts req to the webhook of h and returns its successful response.
func (i *Interpreter) call(h *hook, req *configv1alpha1.ResourceInterpreterRequest) (*configv1alpha1.ResourceInterpreterResponse, error) {
	w := h.webhook
	if !slices.Contains(w.InterpreterContextVersions, contextVersion) {
		return nil, fmt.Errorf("none of the interpreter context versions %q is supported; only %q is",
			w.InterpreterContextVersions, contextVersion)
	}
	ep, err := i.resolveEndpoint(&w.ClientConfig)
	if err != nil {
		return nil, err
	}
	client, err := i.clients.get(clientKey{config: h.config, webhook: w.Name}, w.ClientConfig.CABundle, ep)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(&configv1alpha1.ResourceInterpreterContext{
		TypeMeta: metav1.TypeMeta{APIVersion: configv1alpha1.SchemeGroupVersion.String(), Kind: contextKind},
		Request:  req,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}

	timeout := defaultTimeout
	if w.TimeoutSeconds != nil && *w.TimeoutSeconds > 0 {
		timeout = time.Duration(*w.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "application/json")
	httpResp, err := client.Do(httpReq)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within %s: %w", timeout, err)
		}
		return nil, err
	}
	defer func() { _ = httpResp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(httpResp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading response: %w", err)
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("response larger than %d bytes", maxResponseBytes)
	}
	if httpResp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered HTTP %d: %s", httpResp.StatusCode, excerpt(data))
	}
	return decodeResponse(data, req.UID)
}

// decodeResponse decodes a webhook's body and checks that it is a successful
// answer to the request with the given uid.
func decodeResponse(data []byte, uid types.UID) (*configv1alpha1.ResourceInterpreterResponse, error) {
	var out configv1alpha1.ResourceInterpreterContext
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decoding response: %w", err)
	}
	// An empty apiVersion or kind is tolerated, a different one is not.
	if (out.APIVersion != "" && out.APIVersion != configv1alpha1.SchemeGroupVersion.String()) ||
		(out.Kind != "" && out.Kind != contextKind) {
		return nil, fmt.Errorf("answered a %s %s, want a %s %s",
			out.APIVersion, out.Kind, configv1alpha1.SchemeGroupVersion, contextKind)
	}
	r := out.Response
	switch {
	case r == nil:
		return nil, errors.New("answer has no response")
	case r.UID != uid:
		return nil, fmt.Errorf("response uid %q does not match request uid %q", r.UID, uid)
	case !r.Successful && r.Status == nil:
		return nil, errors.New("unsuccessful, without a status")
	case !r.Successful:
		return nil, fmt.Errorf("unsuccessful (code %d): %s", r.Status.Code, r.Status.Message)
	}
	return r, nil
}

// excerpt returns the start of a body for an error message.
func excerpt(data []byte) string {
	const limit = 256
	data = bytes.TrimSpace(data)
	if len(data) > limit {
		return string(data[:limit]) + "..."
	}
	return string(data)
}
