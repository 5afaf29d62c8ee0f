package mcs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// exportCondition waits until member's ServiceExport ns/name has condition
// typ with reason and a message containing msg.
func exportCondition(t *testing.T, member, ns, name, typ, reason, msg string) {
	t.Helper()
	dyn := memberDynamic(t, member)
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		se, err := dyn.Resource(multiclusterv1alpha1.ServiceExports).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(se.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == typ && m["reason"] == reason && strings.Contains(fmt.Sprint(m["message"]), msg) {
				return ""
			}
		}
		return fmt.Sprintf("%s's ServiceExport %s has conditions %v, want %s with reason %s saying %q", member, name, conds, typ, reason, msg)
	})
}

// templateEvent waits for an event of reason on the control plane's
// object kind ns/name whose message contains msg.
func templateEvent(t *testing.T, kind, ns, name, reason, msg string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		evs, err := framework.HostClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: fmt.Sprintf("involvedObject.kind=%s,involvedObject.name=%s,reason=%s", kind, name, reason)})
		if err != nil {
			return err.Error()
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, msg) {
				return ""
			}
		}
		return fmt.Sprintf("no %s event saying %q on %s %s (%d of that reason)", reason, msg, kind, name, len(evs.Items))
	})
}

// TestServiceExportBadInput: a ServiceExport propagated to a
// member without the Service says so (Valid False, NoService) in that
// member, with a warning on the template; once the member has a Service
// of its own whose port of the same name differs from the other
// exporter's, both exports say Conflict (PortConflict). Nothing of the
// member's own is changed: deleting the export leaves its Service.
func TestServiceExportBadInput(t *testing.T) {
	mcsCRDsInMembers(t)
	ns := framework.Namespace(t, "mcs-badexport")
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: api, namespace: %[1]s}
spec:
  selector: {app: api}
  ports: [{name: http, port: 80, targetPort: 80}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: api, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Service, name: api}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: api, namespace: %[1]s}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: api-export, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceExport, name: api}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`, ns))

	exportCondition(t, "member2", ns, "api", "Valid", "NoService", "Service "+ns+"/api does not exist in cluster member2")
	exportCondition(t, "member1", ns, "api", "Valid", "Exported", "")
	exportCondition(t, "member1", ns, "api", "Conflict", "NoConflicts", "")
	templateEvent(t, "ServiceExport", ns, "api", "NoService", "cluster member2")

	// member2's own Service api, whose port http is another number.
	own := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "api"},
		Ports:    []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := framework.MemberClient(t, "member2").CoreV1().Services(ns).Create(t.Context(), own, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	exportCondition(t, "member2", ns, "api", "Valid", "Exported", "")
	for _, m := range []string{"member1", "member2"} {
		exportCondition(t, m, ns, "api", "Conflict", "PortConflict", `port "http" is`)
	}
	templateEvent(t, "ServiceExport", ns, "api", "PortConflict", "8080/TCP")

	// The export deleted: member2's own Service stays as it was.
	kubectl(t, "-n", ns, "delete", "serviceexport", "api")
	exportGone(t, "member2", ns, "api")
	svc, err := framework.MemberClient(t, "member2").CoreV1().Services(ns).Get(t.Context(), "api", metav1.GetOptions{})
	if err != nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("member2's own Service api after the export went: %v (%v)", svc, err)
	}
}

// importClusters waits until member's ServiceImport ns/name lists want in
// status.clusters (written, possibly empty).
func importClusters(t *testing.T, member, ns, name string, want ...string) {
	t.Helper()
	dyn := memberDynamic(t, member)
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		si, err := dyn.Resource(multiclusterv1alpha1.ServiceImports).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		raw, found, _ := unstructured.NestedSlice(si.Object, "status", "clusters")
		got := []string{}
		for _, r := range raw {
			m, _ := r.(map[string]any)
			got = append(got, fmt.Sprint(m["cluster"]))
		}
		if !found || strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Sprintf("%s's ServiceImport %s: status.clusters %v (written: %v), want %v", member, name, got, found, want)
		}
		return ""
	})
}

// TestServiceImportWithoutExport: a ServiceImport no cluster
// exports gets its derived Service without endpoints, an empty
// status.clusters and a ServiceNotExported warning on the template; once
// member1 exports the Service, status.clusters names it.
func TestServiceImportWithoutExport(t *testing.T) {
	mcsCRDsInMembers(t)
	ns := framework.Namespace(t, "mcs-noexport")
	framework.Apply(t, fmt.Sprintf(`apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: db, namespace: %[1]s}
spec:
  type: ClusterSetIP
  ports: [{name: sql, port: 5432, protocol: TCP}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: db-import, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceImport, name: db}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
`, ns))
	importClusters(t, "member2", ns, "db")
	templateEvent(t, "ServiceImport", ns, "db", "ServiceNotExported", "No cluster exports Service "+ns+"/db")
	if _, err := framework.MemberClient(t, "member2").CoreV1().Services(ns).Get(t.Context(), "derived-db", metav1.GetOptions{}); err != nil {
		t.Errorf("derived-db in member2: %v", err)
	}

	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: db, namespace: %[1]s}
spec:
  selector: {app: db}
  ports: [{name: sql, port: 5432, targetPort: 5432}]
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: db, namespace: %[1]s}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: db, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Service, name: db}
  - {apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceExport, name: db}
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns))
	importClusters(t, "member2", ns, "db", "member1")
}
