package propagation

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
)

var gadgets = schema.GroupVersionResource{Group: "gadgets.example.io", Version: "v1", Resource: "gadgets"}

// gadgetWebhook interprets Gadgets: spec.size is the replica count. While
// failRevise is set it answers ReviseReplica unsuccessfully.
type gadgetWebhook struct {
	failRevise atomic.Bool
	calls      atomic.Int64
}

func (g *gadgetWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.calls.Add(1)
	var in configv1alpha1.ResourceInterpreterContext
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	req := in.Request
	resp := &configv1alpha1.ResourceInterpreterResponse{UID: req.UID, Successful: true}
	var obj struct {
		Spec struct {
			Size int32 `json:"size"`
		} `json:"spec"`
	}
	_ = json.Unmarshal(req.Object.Raw, &obj)
	size := obj.Spec.Size
	switch req.Operation {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		resp.Replicas = &size
	case configv1alpha1.InterpreterOperationReviseReplica:
		if g.failRevise.Load() {
			resp.Successful = false
			resp.Status = &configv1alpha1.RequestStatus{Message: "gadget webhook refuses to revise", Code: http.StatusForbidden}
			break
		}
		patch, _ := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/size", "value": *req.DesiredReplicas}})
		pt := configv1alpha1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = patch, &pt
	case configv1alpha1.InterpreterOperationInterpretHealth:
		healthy := true
		resp.Healthy = &healthy
	default:
		resp.Successful = false
		resp.Status = &configv1alpha1.RequestStatus{Message: "unsupported " + string(req.Operation), Code: http.StatusBadRequest}
	}
	in.Request, in.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(in)
}

// An interpreter webhook started by the test (TLS, verified against the
// caBundle) teaches Flotilla the Gadget kind: its size is divided 2:1 and
// its health interpreted. A webhook that fails surfaces as a SyncWorkFailed
// event on the binding with the webhook's message, and nothing else breaks.
func TestInterpreterWebhook(t *testing.T) {
	hook := &gadgetWebhook{}
	srv := httptest.NewTLSServer(hook)
	t.Cleanup(srv.Close)
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	apply(t, openCRD(gadgets, "Gadget"))
	if out, err := kubectl(t, "wait", "--for=condition=Established", "crd/gadgets.gadgets.example.io", "--timeout=30s"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	cfg := &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name: "gadgets.example.io",
			Rules: []configv1alpha1.RuleWithOperations{{
				Operations: []configv1alpha1.InterpreterOperation{
					configv1alpha1.InterpreterOperationInterpretReplica, configv1alpha1.InterpreterOperationReviseReplica,
					configv1alpha1.InterpreterOperationInterpretHealth},
				Rule: configv1alpha1.Rule{APIGroups: []string{"gadgets.example.io"}, APIVersions: []string{"v1"}, Kinds: []string{"Gadget"}},
			}},
			InterpreterContextVersions: []string{"v1alpha1"},
			TimeoutSeconds:             ptrTo(int32(5)),
		}},
	}
	cfg.Webhooks[0].ClientConfig.URL = ptrTo(srv.URL + "/interpret")
	cfg.Webhooks[0].ClientConfig.CABundle = caBundle
	createWebhookConfiguration(t, cfg)

	ns := namespace(t, "webhook-interpreter")
	apply(t, weighted21Policy("gadget", ns, "gadgets.example.io/v1", "Gadget"))
	members := servedIn(t, gadgets, ns, "member1", "member2")
	gadget := func(size int) string {
		return fmt.Sprintf("apiVersion: gadgets.example.io/v1\nkind: Gadget\nmetadata: {name: gadget, namespace: %s}\nspec: {size: %d}\n", ns, size)
	}
	sizes := func(ctx context.Context) map[string]int64 {
		got := map[string]int64{}
		for m, c := range members {
			if g, err := c.Get(ctx, "gadget", metav1.GetOptions{}); err == nil {
				got[m], _, _ = unstructured.NestedInt64(g.Object, "spec", "size")
			}
		}
		return got
	}
	apply(t, gadget(3))
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		if got := sizes(ctx); got["member1"] != 2 || got["member2"] != 1 {
			return fmt.Sprintf("sizes %v, want member1 2 and member2 1 (webhook calls %d); %s", got, hook.calls.Load(), gadgetBinding(ctx, t, ns))
		}
		return ""
	})
	eventually(t, 60*time.Second, func(ctx context.Context) string { return bothHealthy(ctx, t, ns, "gadget-gadget") })

	// The webhook fails: the binding says so; the members keep what they had.
	hook.failRevise.Store(true)
	apply(t, gadget(6))
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		list, err := host(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=ResourceBinding,involvedObject.name=gadget-gadget"})
		if err != nil {
			return err.Error()
		}
		for _, e := range list.Items {
			if e.Reason == "SyncWorkFailed" && strings.Contains(e.Message, "gadget webhook refuses to revise") {
				return ""
			}
		}
		return fmt.Sprintf("no SyncWorkFailed event carrying the webhook's message on the binding: %d events", len(list.Items))
	})
	if got := sizes(t.Context()); got["member1"] != 2 || got["member2"] != 1 {
		t.Errorf("members changed while the webhook failed: %v", got)
	}
	// It recovers once the webhook does.
	hook.failRevise.Store(false)
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		if got := sizes(ctx); got["member1"] != 4 || got["member2"] != 2 {
			return fmt.Sprintf("sizes %v, want member1 4 and member2 2 once the webhook answers again", got)
		}
		return ""
	})
}

func ptrTo[T any](v T) *T { return &v }

// createWebhookConfiguration creates cfg, deleted when the test ends.
func createWebhookConfiguration(t *testing.T, cfg *configv1alpha1.ResourceInterpreterWebhookConfiguration) {
	t.Helper()
	if _, err := karmada(t).ConfigV1alpha1().ResourceInterpreterWebhookConfigurations().Create(t.Context(), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = karmada(t).ConfigV1alpha1().ResourceInterpreterWebhookConfigurations().Delete(context.Background(), cfg.Name, metav1.DeleteOptions{})
	})
}

func gadgetBinding(ctx context.Context, t *testing.T, ns string) string {
	rb, err := karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "gadget-gadget", metav1.GetOptions{})
	if err != nil {
		return "binding: " + err.Error()
	}
	return fmt.Sprintf("binding replicas %d clusters %+v conditions %+v", rb.Spec.Replicas, rb.Spec.Clusters, rb.Status.Conditions)
}
