package propagation

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	certutil "k8s.io/client-go/util/cert"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
)

var gizmos = schema.GroupVersionResource{Group: "gizmos.example.io", Version: "v1", Resource: "gizmos"}

// A webhook referred to by a Service rather than a URL: the Service on the
// host is an ExternalName pointing at the test's own listener (how a
// webhook outside the host cluster is reached), and the webhook's
// certificate is issued, as Kubernetes expects, for <name>.<namespace>.svc
// only, so the call succeeds only if TLS is verified against that name and
// the caBundle.
func TestInterpreterWebhookService(t *testing.T) {
	hookNS := namespace(t, "interpreter-hooks")
	const svcName = "gizmo-hook"
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(svcName+"."+hookNS+".svc", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	hook := &gadgetWebhook{}
	srv := httptest.NewUnstartedServer(hook)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, portText, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portText)

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svcName, Namespace: hookNS},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}
	if _, err := host(t).CoreV1().Services(hookNS).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	apply(t, openCRD(gizmos, "Gizmo"))
	if out, err := kubectl(t, "wait", "--for=condition=Established", "crd/gizmos.gizmos.example.io", "--timeout=30s"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	cfg := &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name: "gizmos.example.io",
			Rules: []configv1alpha1.RuleWithOperations{{
				Operations: []configv1alpha1.InterpreterOperation{
					configv1alpha1.InterpreterOperationInterpretReplica, configv1alpha1.InterpreterOperationReviseReplica},
				Rule: configv1alpha1.Rule{APIGroups: []string{"gizmos.example.io"}, APIVersions: []string{"v1"}, Kinds: []string{"Gizmo"}},
			}},
			InterpreterContextVersions: []string{"v1alpha1"},
			TimeoutSeconds:             ptrTo(int32(5)),
		}},
	}
	cfg.Webhooks[0].ClientConfig.Service = &admissionregistrationv1.ServiceReference{
		Namespace: hookNS, Name: svcName, Port: ptrTo(int32(port)), Path: ptrTo("/interpret"),
	}
	cfg.Webhooks[0].ClientConfig.CABundle = certPEM
	createWebhookConfiguration(t, cfg)

	ns := namespace(t, "webhook-service")
	apply(t, weighted21Policy("gizmo", ns, "gizmos.example.io/v1", "Gizmo"))
	members := servedIn(t, gizmos, ns, "member1", "member2")
	apply(t, fmt.Sprintf("apiVersion: gizmos.example.io/v1\nkind: Gizmo\nmetadata: {name: gizmo, namespace: %s}\nspec: {size: 6}\n", ns))
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		got := map[string]int64{}
		for m, c := range members {
			if g, err := c.Get(ctx, "gizmo", metav1.GetOptions{}); err == nil {
				got[m], _, _ = unstructured.NestedInt64(g.Object, "spec", "size")
			}
		}
		if got["member1"] != 4 || got["member2"] != 2 {
			return fmt.Sprintf("sizes %v, want member1 4 and member2 2 (webhook calls %d)", got, hook.calls.Load())
		}
		return ""
	})
}
