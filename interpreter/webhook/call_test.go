package webhook

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
)

// TestCallErrors checks that every way a webhook call can go wrong gives a
// descriptive error naming the webhook.
func TestCallErrors(t *testing.T) {
	t.Parallel()
	answer := func(resp *configv1alpha1.ResourceInterpreterResponse) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, &configv1alpha1.ResourceInterpreterContext{Response: resp})
		}
	}
	// echo answers a successful response to the request, changed by edit.
	echo := func(edit func(*configv1alpha1.ResourceInterpreterResponse)) answerFunc {
		return succeed(edit)
	}

	tests := []struct {
		name string
		// server starts the webhook; nil means a working one.
		server func(t *testing.T) *httptest.Server
		// edit changes the webhook configuration.
		edit func(t *testing.T, w *configv1alpha1.ResourceInterpreterWebhook)
		// op calls the interpreter; nil means ReviseReplica.
		op   func(i *Interpreter, t *testing.T) error
		want []string
	}{{
		name: "webhook down",
		server: func(t *testing.T) *httptest.Server {
			srv := httptest.NewTLSServer(http.NotFoundHandler())
			srv.Close()
			return srv
		},
		want: []string{"connect"},
	}, {
		name: "wrong caBundle",
		edit: func(t *testing.T, w *configv1alpha1.ResourceInterpreterWebhook) {
			// httptest servers share one certificate; this CA is another.
			_, w.ClientConfig.CABundle = selfSignedCert(t, "other.example.com")
		},
		want: []string{"certificate signed by unknown authority"},
	}, {
		name: "caBundle without certificates",
		edit: func(t *testing.T, w *configv1alpha1.ResourceInterpreterWebhook) {
			w.ClientConfig.CABundle = []byte("not PEM")
		},
		want: []string{"caBundle holds no PEM certificate"},
	}, {
		name: "timeout",
		server: func(t *testing.T) *httptest.Server {
			return newRawWebhook(t, func(w http.ResponseWriter, r *http.Request) {
				// The server notices the client going, and cancels the
				// request's context, only once the body has been read.
				_, _ = io.Copy(io.Discard, r.Body)
				select {
				case <-r.Context().Done():
				case <-time.After(3 * time.Second):
				}
			})
		},
		edit: func(t *testing.T, w *configv1alpha1.ResourceInterpreterWebhook) { w.TimeoutSeconds = ptr.To[int32](1) },
		want: []string{"no answer within 1s", "deadline exceeded"},
	}, {
		name: "non-200",
		server: func(t *testing.T) *httptest.Server {
			return newRawWebhook(t, func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "boom", http.StatusInternalServerError)
			})
		},
		want: []string{"answered HTTP 500: boom"},
	}, {
		name: "malformed JSON",
		server: func(t *testing.T) *httptest.Server {
			return newRawWebhook(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"response":`)) })
		},
		want: []string{"decoding response"},
	}, {
		name: "wrong kind",
		server: func(t *testing.T) *httptest.Server {
			return newRawWebhook(t, func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`))
			})
		},
		want: []string{"answered a admission.k8s.io/v1 AdmissionReview"},
	}, {
		name: "no response",
		server: func(t *testing.T) *httptest.Server {
			return newRawWebhook(t, answer(nil))
		},
		want: []string{"answer has no response"},
	}, {
		name: "uid mismatch",
		server: func(t *testing.T) *httptest.Server {
			return newFakeWebhook(t, echo(func(r *configv1alpha1.ResourceInterpreterResponse) { r.UID = "not-the-request" })).srv
		},
		want: []string{`response uid "not-the-request" does not match request uid`},
	}, {
		name: "unsuccessful",
		server: func(t *testing.T) *httptest.Server {
			return newFakeWebhook(t, echo(func(r *configv1alpha1.ResourceInterpreterResponse) {
				r.Successful = false
				r.Status = &configv1alpha1.RequestStatus{Message: "cannot revise a paused deployment", Code: 422}
			})).srv
		},
		want: []string{"unsuccessful (code 422): cannot revise a paused deployment"},
	}, {
		name: "unsuccessful without status",
		server: func(t *testing.T) *httptest.Server {
			return newFakeWebhook(t, echo(func(r *configv1alpha1.ResourceInterpreterResponse) { r.Successful = false })).srv
		},
		want: []string{"unsuccessful, without a status"},
	}, {
		name: "unsupported context version",
		edit: func(t *testing.T, w *configv1alpha1.ResourceInterpreterWebhook) {
			w.InterpreterContextVersions = []string{"v1beta1"}
		},
		want: []string{`none of the interpreter context versions ["v1beta1"] is supported; only "v1alpha1" is`},
	}, {
		name: "plain http url",
		edit: func(t *testing.T, w *configv1alpha1.ResourceInterpreterWebhook) {
			w.ClientConfig.URL = ptr.To(strings.Replace(*w.ClientConfig.URL, "https://", "http://", 1))
		},
		want: []string{"want https://"},
	}, {
		name: "no url nor service",
		edit: func(t *testing.T, w *configv1alpha1.ResourceInterpreterWebhook) { w.ClientConfig.URL = nil },
		want: []string{"clientConfig has neither url nor service"},
	}, {
		name: "patch without type",
		server: func(t *testing.T) *httptest.Server {
			return newFakeWebhook(t, echo(func(r *configv1alpha1.ResourceInterpreterResponse) { r.Patch = []byte(`[]`) })).srv
		},
		want: []string{"patch without a patchType"},
	}, {
		name: "merge patch",
		server: func(t *testing.T) *httptest.Server {
			return newFakeWebhook(t, echo(func(r *configv1alpha1.ResourceInterpreterResponse) {
				r.Patch = []byte(`{"spec":{"replicas":3}}`)
				r.PatchType = ptr.To(configv1alpha1.PatchType("MergePatch"))
			})).srv
		},
		want: []string{`unsupported patchType "MergePatch"`},
	}, {
		name: "patch that does not apply",
		server: func(t *testing.T) *httptest.Server {
			return newFakeWebhook(t, echo(func(r *configv1alpha1.ResourceInterpreterResponse) {
				jsonPatch(r, `[{"op":"replace","path":"/spec/missing/field","value":1}]`)
			})).srv
		},
		want: []string{"applying patch"},
	}, {
		name: "malformed patch",
		server: func(t *testing.T) *httptest.Server {
			return newFakeWebhook(t, echo(func(r *configv1alpha1.ResourceInterpreterResponse) { jsonPatch(r, `{"op":`) })).srv
		},
		want: []string{"decoding patch"},
	}, {
		name: "replicas out of range",
		op: func(i *Interpreter, t *testing.T) error {
			_, err := i.ReviseReplica(deployment(t), 1<<31)
			return err
		},
		want: []string{"replicas 2147483648 out of range"},
	}, {
		name: "health without healthy",
		op: func(i *Interpreter, t *testing.T) error {
			_, err := i.InterpretHealth(deployment(t))
			return err
		},
		want: []string{"InterpretHealth: response has no healthy"},
	}, {
		name: "negative replicas",
		server: func(t *testing.T) *httptest.Server {
			return newFakeWebhook(t, echo(func(r *configv1alpha1.ResourceInterpreterResponse) { r.Replicas = ptr.To[int32](-1) })).srv
		},
		op: func(i *Interpreter, t *testing.T) error {
			_, _, err := i.GetReplicas(deployment(t))
			return err
		},
		want: []string{"InterpretReplica: negative replicas -1"},
	}, {
		name: "nil observed object",
		op: func(i *Interpreter, t *testing.T) error {
			_, err := i.Retain(deployment(t), nil)
			return err
		},
		want: []string{"Retain: nil observed object"},
	}, {
		name: "nil object",
		op: func(i *Interpreter, t *testing.T) error {
			_, _, err := i.GetReplicas(nil)
			return err
		},
		want: []string{"InterpretReplica: nil object"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var srv *httptest.Server
			if tc.server != nil {
				srv = tc.server(t)
			} else {
				srv = newFakeWebhook(t, succeed(nil)).srv
			}
			hook := urlWebhook("hook.example.com", srv, allOnDeployments)
			if tc.edit != nil {
				tc.edit(t, &hook)
			}
			i := newTestInterpreter(t, Options{}, webhookConfig("config", hook))
			op := tc.op
			if op == nil {
				op = func(i *Interpreter, t *testing.T) error {
					_, err := i.ReviseReplica(deployment(t), 3)
					return err
				}
			}

			start := time.Now()
			err := op(i, t)
			if err == nil {
				t.Fatal("no error")
			}
			if time.Since(start) > 2500*time.Millisecond {
				t.Errorf("call took %s; the timeout was not applied", time.Since(start))
			}
			msg := err.Error()
			wantPrefix := `webhook "hook.example.com": `
			if tc.name == "replicas out of range" || tc.name == "nil object" {
				wantPrefix = "" // refused before a webhook is chosen
			}
			if !strings.HasPrefix(msg, wantPrefix) {
				t.Errorf("error %q does not start with %q", msg, wantPrefix)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}
