package propagation

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// TestNamespaceAutoPropagation: a namespace created on the control plane
// appears in every member; its deletion follows. Skipped namespaces stay
// home.
func TestNamespaceAutoPropagation(t *testing.T) {
	if out, err := kubectl(t, "create", "namespace", "s4-team"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	// Created with the label: like Karmada, labelling a namespace that was
	// already propagated keeps it where it is.
	apply(t, `apiVersion: v1
kind: Namespace
metadata: {name: s4-private, labels: {namespace.karmada.io/skip-auto-propagation: "true"}}
`)
	t.Cleanup(func() { _, _ = kubectl(t, "delete", "namespace", "s4-private", "--wait=false") })
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		for _, m := range []string{"member1", "member2"} {
			if _, err := member(t, m).CoreV1().Namespaces().Get(ctx, "s4-team", metav1.GetOptions{}); err != nil {
				return fmt.Sprintf("namespace s4-team in %s: %v", m, err)
			}
		}
		return ""
	})
	for _, m := range []string{"member1", "member2"} {
		if _, err := member(t, m).CoreV1().Namespaces().Get(t.Context(), "s4-private", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("skipped namespace s4-private reached %s: %v", m, err)
		}
	}
	if out, err := kubectl(t, "delete", "namespace", "s4-team"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		for _, m := range []string{"member1", "member2"} {
			ns, err := member(t, m).CoreV1().Namespaces().Get(ctx, "s4-team", metav1.GetOptions{})
			if err == nil && ns.DeletionTimestamp == nil {
				return fmt.Sprintf("namespace s4-team still in %s", m)
			}
		}
		return ""
	})
}

// TestPropagateDeps: with propagateDeps the ConfigMaps, Secrets,
// ServiceAccount and PVCs a Deployment references follow it to its
// clusters, and only there.
func TestPropagateDeps(t *testing.T) {
	ns := namespace(t, "s4-deps")
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: %[1]s}
data: {mode: prod}
---
apiVersion: v1
kind: Secret
metadata: {name: app-secret, namespace: %[1]s}
stringData: {password: s3cr3t}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: app-sa, namespace: %[1]s}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: app-data, namespace: %[1]s}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated, namespace: %[1]s}
data: {x: "y"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      serviceAccountName: app-sa
      containers:
        - name: app
          image: nginx
          env: [{name: PASSWORD, valueFrom: {secretKeyRef: {name: app-secret, key: password}}}]
          volumeMounts: [{name: config, mountPath: /etc/app}, {name: data, mountPath: /data}]
      volumes:
        - {name: config, configMap: {name: app-config}}
        - {name: data, persistentVolumeClaim: {claimName: app-data}}
`, ns))
	apply(t, policy("app", ns, "app", "    clusterAffinity: {clusterNames: [member1]}\n", "  propagateDeps: true\n"))
	wantReplicas(t, 90*time.Second, ns, "app", map[string]int32{"member1": 1, "member2": -1})
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		m1 := member(t, "member1").CoreV1()
		if _, err := m1.ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{}); err != nil {
			return "configmap: " + err.Error()
		}
		if _, err := m1.Secrets(ns).Get(ctx, "app-secret", metav1.GetOptions{}); err != nil {
			return "secret: " + err.Error()
		}
		if _, err := m1.ServiceAccounts(ns).Get(ctx, "app-sa", metav1.GetOptions{}); err != nil {
			return "serviceaccount: " + err.Error()
		}
		if _, err := m1.PersistentVolumeClaims(ns).Get(ctx, "app-data", metav1.GetOptions{}); err != nil {
			return "pvc: " + err.Error()
		}
		return ""
	})
	if _, err := member(t, "member1").CoreV1().ConfigMaps(ns).Get(t.Context(), "unrelated", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an unreferenced ConfigMap was propagated: %v", err)
	}
	if _, err := member(t, "member2").CoreV1().ConfigMaps(ns).Get(t.Context(), "app-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dependency reached member2: %v", err)
	}
	rb, err := karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "app-deployment", metav1.GetOptions{})
	if err != nil || !strings.Contains(rb.Annotations["resourcebinding.karmada.io/dependencies"], "app-config") {
		t.Errorf("dependencies annotation: %v %v", err, rb.Annotations)
	}
}

var guestbooks = schema.GroupVersionResource{Group: "webapp.my.domain", Version: "v1", Resource: "guestbooks"}

// TestCRD: the Guestbook CRD goes to member1 by a
// ClusterPropagationPolicy, then a Guestbook by a PropagationPolicy;
// member2 gets neither.
func TestCRD(t *testing.T) {
	guestbookSample(t)
	cfg, err := framework.Env.Member("member2").RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynamic.NewForConfigOrDie(cfg).Resource(guestbooks).Namespace("default").List(t.Context(), metav1.ListOptions{}); err == nil {
		t.Error("member2 serves guestbooks: the CRD reached it")
	}
}

// guestbookSample applies samples/guestbook/ (the Guestbook CRD to member1, then
// guestbook-sample in default to member1) and waits until member1 has the
// Guestbook. Applying is idempotent: TestCRD and TestPlaintextOverride
// each call it, in any order, and leave the samples in place (deleting a
// CRD while a member still serves it would slow the next test down).
func guestbookSample(t *testing.T) {
	t.Helper()
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl(t, "apply", "-f", filepath.Join(root, "samples", "guestbook", "1-guestbook-crd.yaml")); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := kubectl(t, "wait", "--for=condition=Established", "crd/guestbooks.webapp.my.domain", "--timeout=30s"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := kubectl(t, "apply", "-n", "default", "-f", filepath.Join(root, "samples", "guestbook", "2-guestbook-sample.yaml")); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	m1 := framework.Env.Member("member1").Kubeconfig
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		out, err := kubectlAt(t, m1, "get", "guestbook", "-n", "default")
		if err != nil || !strings.Contains(out, "guestbook-sample") {
			return fmt.Sprintf("kubectl get guestbook on member1: %v %s", err, out)
		}
		return ""
	})
}
