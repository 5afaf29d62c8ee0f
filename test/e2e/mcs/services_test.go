package mcs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// follow is how soon a change of the providers' Ready pods must show in
// member3's derived EndpointSlices: the member's own EndpointSlice
// controller, the collection, the dispatch and the apply, in seconds.
const follow = 15 * time.Second

// TestMCSCRDsOnTheHost: flotilla-apiserver installs the MCS API's
// CRDs on the host at start, with the upstream kinds, and they reach the
// members with a ClusterPropagationPolicy.
func TestMCSCRDsOnTheHost(t *testing.T) {
	resources, err := framework.HostClient(t).Discovery().ServerResourcesForGroupVersion("multicluster.x-k8s.io/v1alpha1")
	if err != nil {
		t.Fatalf("the host does not serve multicluster.x-k8s.io/v1alpha1: %v", err)
	}
	var kinds []string
	for _, r := range resources.APIResources {
		kinds = append(kinds, r.Kind+"/"+r.Name)
	}
	for _, want := range []string{"ServiceExport/serviceexports", "ServiceImport/serviceimports"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("the host serves %v, not %s", kinds, want)
		}
	}
	for _, crd := range []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io"} {
		out := kubectl(t, "get", "crd", crd, "-o", "jsonpath={.metadata.managedFields[*].manager}")
		if !slices.Contains(strings.Fields(out), "flotilla-apiserver") {
			t.Errorf("CRD %s is managed by %q, not flotilla-apiserver", crd, out)
		}
	}
	mcsCRDsInMembers(t)
	for _, m := range members {
		if _, err := framework.MemberClient(t, m).Discovery().ServerResourcesForGroupVersion("multicluster.x-k8s.io/v1alpha1"); err != nil {
			t.Errorf("%s does not serve the MCS API: %v", m, err)
		}
	}
	// The schema bounds what the controllers read: a port out of range
	// is refused, with the field named.
	f := filepath.Join(t.TempDir(), "si.yaml")
	si := "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {name: bad, namespace: default}\n" +
		"spec: {type: ClusterSetIP, ports: [{port: 70000}]}\n"
	if err := os.WriteFile(f, []byte(si), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := framework.Kubectl(t, "apply", "--dry-run=server", "-f", f); err == nil || !strings.Contains(out, "spec.ports[0].port") {
		t.Errorf("a ServiceImport with port 70000: %v, %s; want refused naming spec.ports[0].port", err, out)
	}
}

// TestServiceExportImport (the seed's flow): nginx divided
// over member1 and member2 with its Service, exported from both and
// imported into member3. member3 gets derived-nginx, whose EndpointSlices
// list every Ready pod of member1 and member2, and follow a scale-up and a
// pod deletion within seconds. Deleting the ServiceExport withdraws the
// endpoints; deleting the ServiceImport removes derived-nginx.
func TestServiceExportImport(t *testing.T) {
	mcsCRDsInMembers(t)
	ns := framework.Namespace(t, "mcs-seed")
	framework.Apply(t, nginx(ns, 4))

	// The derived Service, from the import's ports, and the endpoints.
	ips := providerIPs(t, ns, 4)
	waitImported(t, ns, ips, 90*time.Second)
	svc, err := framework.MemberClient(t, "member3").CoreV1().Services(ns).Get(t.Context(), "derived-nginx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || len(svc.Spec.Selector) != 0 || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 ||
		svc.Spec.Ports[0].Name != "http" || svc.Labels["karmada.io/managed"] != "true" {
		t.Errorf("derived-nginx: type %s selector %v ports %+v labels %v", svc.Spec.Type, svc.Spec.Selector, svc.Spec.Ports, svc.Labels)
	}
	// Imported under Karmada's names, from both providers.
	_, names, err := importedIPs(t.Context(), t, ns, "nginx")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"imported-member1-nginx-", "imported-member2-nginx-"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, p) }) {
			t.Errorf("member3's derived-nginx EndpointSlices %v: none named %s*", names, p)
		}
	}
	// Collected into the providers' execution namespaces.
	collected, err := works(t.Context(), t, ns, "nginx", "ServiceExport")
	if err != nil {
		t.Fatal(err)
	}
	for _, es := range []string{"karmada-es-member1/", "karmada-es-member2/"} {
		if !slices.ContainsFunc(collected, func(w string) bool { return strings.HasPrefix(w, es) }) {
			t.Errorf("collected Works %v: none in %s", collected, es)
		}
	}
	// The event on the control plane's ServiceImport.
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		evs, err := framework.HostClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=ServiceImport,involvedObject.name=nginx,reason=SyncDerivedServiceSucceed"})
		if err != nil {
			return err.Error()
		}
		if len(evs.Items) == 0 {
			return "no SyncDerivedServiceSucceed event on ServiceImport nginx"
		}
		return ""
	})

	// The providers' Services and ServiceExports, which execution applied
	// and the MCS controllers read, are watched once each.
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		providers := []string{"member1", "member2"}
		open, err := framework.MemberWatches(ctx, t, providers...)
		if err != nil {
			return err.Error()
		}
		return framework.OneWatchEach(open, providers, []string{"services", "serviceexports.multicluster.x-k8s.io"})
	})

	// Scale-up: the new pods' addresses follow within seconds.
	kubectl(t, "-n", ns, "scale", "deployment", "nginx", "--replicas=6")
	ips = providerIPs(t, ns, 6)
	waitImported(t, ns, ips, follow)

	// A pod deleted in member1: its replacement's address replaces its own.
	pods, err := framework.MemberClient(t, "member1").CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=nginx"})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("member1's nginx pods: %v", err)
	}
	victim := pods.Items[0]
	if err := framework.MemberClient(t, "member1").CoreV1().Pods(ns).Delete(t.Context(), victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		_, err := framework.MemberClient(t, "member1").CoreV1().Pods(ns).Get(ctx, victim.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ""
		}
		return fmt.Sprintf("pod %s not gone yet (%v)", victim.Name, err)
	})
	ips = providerIPs(t, ns, 6)
	if slices.Contains(ips, victim.Name+"="+victim.Status.PodIP) {
		t.Fatalf("the deleted pod %s is still listed Ready: %v", victim.Name, ips)
	}
	waitImported(t, ns, ips, follow)

	// The export deleted: the collected Works and member3's slices go,
	// the derived Service stays with the import.
	kubectl(t, "-n", ns, "delete", "serviceexport", "nginx")
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		w, err := works(ctx, t, ns, "nginx", "ServiceExport")
		if err != nil {
			return err.Error()
		}
		if len(w) > 0 {
			return fmt.Sprintf("collected Works remain: %v", w)
		}
		return ""
	})
	waitImported(t, ns, nil, 30*time.Second)
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		_, names, err := importedIPs(ctx, t, ns, "nginx")
		if err != nil {
			return err.Error()
		}
		if len(names) > 0 {
			return fmt.Sprintf("member3 keeps EndpointSlices %v", names)
		}
		return ""
	})
	if _, err := framework.MemberClient(t, "member3").CoreV1().Services(ns).Get(t.Context(), "derived-nginx", metav1.GetOptions{}); err != nil {
		t.Errorf("derived-nginx went with the export, while the import remains: %v", err)
	}

	// The import deleted: derived-nginx and its Works go.
	kubectl(t, "-n", ns, "delete", "serviceimport", "nginx")
	serviceGone(t, ns, "derived-nginx", 60*time.Second)
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		w, err := works(ctx, t, ns, "nginx", "ServiceImport")
		if err != nil {
			return err.Error()
		}
		if len(w) > 0 {
			return fmt.Sprintf("Works made for member3 remain: %v", w)
		}
		return ""
	})
}

// TestServiceImportLeavesMembersObjects ("nothing deleted that
// Flotilla did not create"): member3 has a Service derived-web of its own
// and a ServiceImport Flotilla did not apply. Importing web neither
// changes nor, once the import is deleted, removes member3's derived-web;
// the member's own ServiceImport gets nothing.
func TestServiceImportLeavesMembersObjects(t *testing.T) {
	mcsCRDsInMembers(t)
	ns := framework.Namespace(t, "mcs-foreign")
	m3 := framework.MemberClient(t, "member3")
	// The namespace reaches member3 by auto-propagation.
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		if _, err := m3.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			return err.Error()
		}
		return ""
	})
	own := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "derived-web", Namespace: ns, Labels: map[string]string{"owner": "member3"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}}}
	if _, err := m3.CoreV1().Services(ns).Create(t.Context(), own, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	local := fmt.Sprintf(`apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: local, namespace: %s}
spec: {type: ClusterSetIP, ports: [{port: 80}]}
`, ns)
	applyAt(t, "member3", local)
	framework.Apply(t, fmt.Sprintf(`apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: web, namespace: %[1]s}
spec:
  type: ClusterSetIP
  ports: [{port: 80, protocol: TCP}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceImport, name: web}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`, ns))

	// The derived Service's Work is made; applying it is refused: the
	// member's Service is not Flotilla's.
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		list, err := framework.Karmada(t).WorkV1alpha1().Works("karmada-es-member3").List(ctx, metav1.ListOptions{
			LabelSelector: "endpointslice.karmada.io/namespace=" + ns + ",endpointslice.karmada.io/name=web"})
		if err != nil {
			return err.Error()
		}
		if len(list.Items) != 1 {
			return fmt.Sprintf("%d Works for member3's import of web, want the derived Service's", len(list.Items))
		}
		for _, c := range list.Items[0].Status.Conditions {
			if c.Type == "Applied" && c.Status == metav1.ConditionFalse {
				return ""
			}
		}
		return fmt.Sprintf("Work %s: conditions %v, want Applied False", list.Items[0].Name, list.Items[0].Status.Conditions)
	})
	// By then the member's own ServiceImport, created first, was seen:
	// it got nothing.
	if w, err := works(t.Context(), t, ns, "local", "ServiceImport"); err != nil || len(w) > 0 {
		t.Errorf("Works for a ServiceImport Flotilla did not apply: %v %v", w, err)
	}
	if _, err := m3.CoreV1().Services(ns).Get(t.Context(), "derived-local", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("derived-local in member3: %v, want none", err)
	}
	checkOwn := func() {
		t.Helper()
		got, err := m3.CoreV1().Services(ns).Get(t.Context(), "derived-web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("member3's own derived-web: %v", err)
		}
		if got.Labels["owner"] != "member3" || got.Labels["karmada.io/managed"] != "" || len(got.Spec.Ports) != 1 || got.Spec.Ports[0].Port != 8080 {
			t.Errorf("member3's own derived-web changed: labels %v ports %+v", got.Labels, got.Spec.Ports)
		}
	}
	checkOwn()

	// The import deleted: its Work goes, member3's Service stays.
	kubectl(t, "-n", ns, "delete", "serviceimport", "web")
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		w, err := works(ctx, t, ns, "web", "ServiceImport")
		if err != nil {
			return err.Error()
		}
		if len(w) > 0 {
			return fmt.Sprintf("Works remain: %v", w)
		}
		return ""
	})
	checkOwn()
}

// TestNotReadyMemberWithdrawn: member2 stops answering; once it
// is NotReady its endpoints leave member3's derived-nginx and the control
// plane's copies, member1's stay, and they come back when member2 does.
func TestNotReadyMemberWithdrawn(t *testing.T) {
	mcsCRDsInMembers(t)
	ns := framework.Namespace(t, "mcs-notready")
	framework.Apply(t, nginx(ns, 4))
	all := providerIPs(t, ns, 4)
	waitImported(t, ns, all, 90*time.Second)
	member1, err := readyPodIPs(t.Context(), t, "member1", ns)
	if err != nil {
		t.Fatal(err)
	}

	waitHost(t, ns, all, 30*time.Second)

	restart := framework.StopMember(t, "member2")
	// NotReady after the failure threshold (6s): withdrawn.
	waitImported(t, ns, member1, 60*time.Second)
	waitHost(t, ns, member1, 30*time.Second)
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		w, err := works(ctx, t, ns, "nginx", "ServiceExport")
		if err != nil {
			return err.Error()
		}
		if slices.ContainsFunc(w, func(s string) bool { return strings.HasPrefix(s, "karmada-es-member2/") }) {
			return fmt.Sprintf("member2's collected Works remain: %v", w)
		}
		return ""
	})

	if err := restart(); err != nil {
		t.Fatal(err)
	}
	all = providerIPs(t, ns, 4)
	waitImported(t, ns, all, 2*time.Minute)
	waitHost(t, ns, all, 30*time.Second)
}

// applyAt applies a manifest to a member directly.
func applyAt(t *testing.T, member, manifest string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := framework.KubectlAt(t, framework.Member(t, member).Kubeconfig, "apply", "-f", f); err != nil {
		t.Fatalf("kubectl apply to %s: %v\n%s", member, err, out)
	}
}
