package plan

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

func obj(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	raw, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return u
}

// memberSlice is an EndpointSlice as a member's EndpointSlice controller
// writes it for Service ns/web.
func memberSlice(t *testing.T, name string, ips ...string) *unstructured.Unstructured {
	t.Helper()
	s := obj(t, `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: `+name+`
  namespace: ns
  uid: 0e1f
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2026-01-01T00:00:00Z"
  managedFields: [{manager: kube-controller-manager}]
  ownerReferences: [{apiVersion: v1, kind: Service, name: web, uid: 9a8b}]
  labels: {kubernetes.io/service-name: web, endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io}
  annotations: {endpoints.kubernetes.io/last-change-trigger-time: "2026-01-01T00:00:00Z"}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
`)
	var eps []any
	for _, ip := range ips {
		eps = append(eps, map[string]any{"addresses": []any{ip}, "conditions": map[string]any{"ready": true}})
	}
	s.Object["endpoints"] = eps
	return s
}

func TestCollectable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		labels  map[string]string
		service string
		want    bool
	}{
		{"the service's slice", map[string]string{"kubernetes.io/service-name": "web"}, "web", true},
		{"another service's", map[string]string{"kubernetes.io/service-name": "db"}, "web", false},
		{"no service", map[string]string{}, "", false},
		{"dispatched by Flotilla", map[string]string{"kubernetes.io/service-name": "web",
			"endpointslice.kubernetes.io/managed-by": networkingv1alpha1.EndpointSliceDispatchControllerLabelValue}, "web", false},
		{"of a Service Flotilla propagated (its labels copied)", map[string]string{"kubernetes.io/service-name": "web", "karmada.io/managed": "true",
			"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}, "web", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Collectable(tc.labels, tc.service); got != tc.want {
				t.Errorf("Collectable = %v, want %v", got, tc.want)
			}
		})
	}
}

// A collected Work holds the member's slice without what only means
// something in the member, is named and labelled as Karmada's, is never
// applied, and reads back as the slice it collected.
func TestCollectedWork(t *testing.T) {
	t.Parallel()
	w, err := CollectedWork("member1", memberSlice(t, "web-abcde", "10.0.0.1"), "ServiceExport")
	if err != nil {
		t.Fatal(err)
	}
	if w.Namespace != "karmada-es-member1" || w.Name != names.WorkName("EndpointSlice", "web-abcde", "ns") {
		t.Errorf("Work %s/%s", w.Namespace, w.Name)
	}
	wantLabels := map[string]string{
		"endpointslice.karmada.io/namespace": "ns", "endpointslice.karmada.io/name": "web",
		"endpointslice.karmada.io/managed-by": "ServiceExport", "propagation.karmada.io/instruction": "suppressed",
	}
	if diff := cmp.Diff(wantLabels, w.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if !ptr.Deref(w.Spec.SuspendDispatching, false) || len(w.Finalizers) != 0 {
		t.Errorf("suspendDispatching %v finalizers %v: a collected Work is never applied and needs no execution", w.Spec.SuspendDispatching, w.Finalizers)
	}
	c, ok := CollectedFrom(w, "ServiceExport")
	if !ok || c.Cluster != "member1" {
		t.Fatalf("CollectedFrom = %+v, %v", c, ok)
	}
	md := c.Slice.Object["metadata"].(map[string]any)
	for _, k := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "ownerReferences"} {
		if _, ok := md[k]; ok {
			t.Errorf("the collected slice keeps metadata.%s", k)
		}
	}
	if c.Slice.GetName() != "web-abcde" || c.Slice.GetLabels()["kubernetes.io/service-name"] != "web" || c.Slice.Object["addressType"] != "IPv4" ||
		len(c.Slice.Object["endpoints"].([]any)) != 1 || len(c.Slice.GetAnnotations()) != 1 {
		t.Errorf("collected slice %v", c.Slice.Object)
	}
	// Not collected Works.
	other := w.DeepCopy()
	other.Labels[networkingv1alpha1.EndpointSliceWorkManagedByLabel] = "EndpointSliceCollect"
	deleting := w.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	elsewhere := w.DeepCopy()
	elsewhere.Namespace = "default"
	for name, w := range map[string]*workv1alpha1.Work{"kept by another controller only": other, "being deleted": deleting, "outside execution namespaces": elsewhere} {
		if _, ok := CollectedFrom(w, "ServiceExport"); ok {
			t.Errorf("%s: read as collected", name)
		}
	}
}

func TestParseServiceImport(t *testing.T) {
	t.Parallel()
	si, err := ParseServiceImport(obj(t, `
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: web, namespace: ns}
spec:
  type: ClusterSetIP
  ports: [{name: http, port: 80, protocol: TCP, appProtocol: http}, {port: 443}]
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := ServiceImport{Namespace: "ns", Name: "web", Type: "ClusterSetIP",
		Ports:           []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("http")}, {Port: 443}},
		SessionAffinity: corev1.ServiceAffinityClientIP, SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](60)}}}
	if diff := cmp.Diff(want, si); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ParseServiceImport(obj(t, "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {name: web}")); err == nil {
		t.Error("a ServiceImport without spec was read")
	}
}

// manifest decodes a Work's only manifest.
func manifest(t *testing.T, w *workv1alpha1.Work) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
		t.Fatal(err)
	}
	return u
}

func collected(t *testing.T, cluster, name string, ips ...string) Collected {
	t.Helper()
	w, err := CollectedWork(cluster, memberSlice(t, name, ips...), "ServiceExport")
	if err != nil {
		t.Fatal(err)
	}
	c, ok := CollectedFrom(w, "ServiceExport")
	if !ok {
		t.Fatal("not collected")
	}
	return c
}

// The importing member gets, in Works of its execution namespace, the
// derived Service (ClusterSetIP only) with the import's ports and no
// selector, and every collected slice under its imported name, labelled
// with the derived Service and its provider.
func TestImportWorks(t *testing.T) {
	t.Parallel()
	si := ServiceImport{Namespace: "ns", Name: "web", Type: "ClusterSetIP",
		Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}
	from := []Collected{collected(t, "member2", "web-zzzzz", "10.0.2.1"), collected(t, "member1", "web-abcde", "10.0.1.1", "10.0.1.2")}
	ws, err := ImportWorks("member3", si, from)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 3 {
		t.Fatalf("%d Works, want the derived Service and two slices", len(ws))
	}
	for _, w := range ws {
		if w.Namespace != "karmada-es-member3" || w.Labels["endpointslice.karmada.io/managed-by"] != "ServiceImport" ||
			w.Labels["endpointslice.karmada.io/namespace"] != "ns" || w.Labels["endpointslice.karmada.io/name"] != "web" ||
			!slices.Equal(w.Finalizers, []string{workv1alpha1.ExecutionControllerFinalizer}) {
			t.Errorf("Work %s/%s labels %v finalizers %v", w.Namespace, w.Name, w.Labels, w.Finalizers)
		}
		m := manifest(t, w)
		if m.GetLabels()["karmada.io/managed"] != "true" || m.GetAnnotations()[workv1alpha2.WorkNameAnnotation] != w.Name ||
			m.GetAnnotations()[workv1alpha2.WorkNamespaceAnnotation] != w.Namespace || m.GetNamespace() != "ns" {
			t.Errorf("manifest %s: labels %v annotations %v", m.GetName(), m.GetLabels(), m.GetAnnotations())
		}
	}
	svc := manifest(t, ws[0])
	wantSpec := map[string]any{"type": "ClusterIP", "ports": []any{map[string]any{"name": "http", "port": int64(80), "protocol": "TCP"}}}
	if svc.GetKind() != "Service" || svc.GetName() != "derived-web" || !cmp.Equal(wantSpec, svc.Object["spec"]) {
		t.Errorf("derived Service %s %s spec %v", svc.GetKind(), svc.GetName(), svc.Object["spec"])
	}
	if len(ws[0].Annotations) != 0 {
		t.Errorf("the derived Service's Work names a provider: %v", ws[0].Annotations)
	}
	for i, want := range []struct{ cluster, name string }{{"member1", "imported-member1-web-abcde"}, {"member2", "imported-member2-web-zzzzz"}} {
		w := ws[i+1]
		m := manifest(t, w)
		if m.GetKind() != "EndpointSlice" || m.GetName() != want.name || m.GetLabels()["kubernetes.io/service-name"] != "derived-web" ||
			m.GetLabels()["endpointslice.kubernetes.io/managed-by"] != networkingv1alpha1.EndpointSliceDispatchControllerLabelValue ||
			m.GetAnnotations()["endpointslice.karmada.io/provision-cluster"] != want.cluster ||
			w.Annotations["endpointslice.karmada.io/provision-cluster"] != want.cluster {
			t.Errorf("imported slice %d: %s labels %v annotations %v, Work annotations %v", i, m.GetName(), m.GetLabels(), m.GetAnnotations(), w.Annotations)
		}
		if m.Object["addressType"] != "IPv4" || len(m.Object["ports"].([]any)) != 1 {
			t.Errorf("imported slice %s: %v", m.GetName(), m.Object)
		}
	}
	if eps := manifest(t, ws[1]).Object["endpoints"].([]any); len(eps) != 2 {
		t.Errorf("member1's slice imported with %d endpoints, want 2", len(eps))
	}
	// A headless import gets no derived Service.
	si.Type = "Headless"
	if ws, err := ImportWorks("member3", si, from); err != nil || len(ws) != 2 || manifest(t, ws[0]).GetKind() != "EndpointSlice" {
		t.Errorf("headless import: %d Works, %v", len(ws), err)
	}
}

// stored is w as the server stores it: mutated (permanent id, labelled
// manifests), with a resourceVersion.
func stored(t *testing.T, w *workv1alpha1.Work) *workv1alpha1.Work {
	t.Helper()
	s := w.DeepCopy()
	if err := mutation.MutateWork(s, true); err != nil {
		t.Fatal(err)
	}
	s.ResourceVersion = "7"
	return s
}

func workNames(ws []*workv1alpha1.Work) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Name)
	}
	return out
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	si := ServiceImport{Namespace: "ns", Name: "web", Type: "ClusterSetIP", Ports: []corev1.ServicePort{{Port: 80}}}
	desired, err := ImportWorks("member3", si, []Collected{collected(t, "member1", "web-a", "10.0.1.1")})
	if err != nil {
		t.Fatal(err)
	}
	svcWork, sliceWork := desired[0], desired[1]
	moved, err := ImportWorks("member3", si, []Collected{collected(t, "member1", "web-a", "10.0.1.9")})
	if err != nil {
		t.Fatal(err)
	}
	gone := stored(t, func() *workv1alpha1.Work {
		ws, _ := ImportWorks("member3", si, []Collected{collected(t, "member2", "web-b")})
		return ws[1]
	}())
	shared := gone.DeepCopy()
	shared.Labels["endpointslice.karmada.io/managed-by"] = "ServiceImport.Other"
	deleting := stored(t, sliceWork)
	deleting.DeletionTimestamp = &metav1.Time{}
	foreign := stored(t, sliceWork)
	delete(foreign.Labels, "endpointslice.karmada.io/managed-by")
	othersOnly := gone.DeepCopy()
	othersOnly.Labels["endpointslice.karmada.io/managed-by"] = "Other"

	for _, tc := range []struct {
		name                             string
		desired, existing                []*workv1alpha1.Work
		create, update, deleted, release []string
		conflicts                        []string
	}{
		{name: "nothing stored", desired: desired, create: workNames(desired)},
		{name: "stored as desired: no write", desired: desired, existing: []*workv1alpha1.Work{stored(t, svcWork), stored(t, sliceWork), stored(t, sliceWork)}},
		{name: "endpoints changed", desired: moved, existing: []*workv1alpha1.Work{stored(t, svcWork), stored(t, sliceWork)}, update: []string{sliceWork.Name}},
		{name: "a slice gone", desired: desired, existing: []*workv1alpha1.Work{stored(t, svcWork), stored(t, sliceWork), gone}, deleted: []string{gone.Name}},
		{name: "a slice gone, kept by another controller too", desired: desired, existing: []*workv1alpha1.Work{stored(t, svcWork), stored(t, sliceWork), shared}, release: []string{shared.Name}},
		{name: "not ours", desired: desired, existing: []*workv1alpha1.Work{stored(t, svcWork), stored(t, sliceWork), othersOnly}},
		{name: "import gone", existing: []*workv1alpha1.Work{stored(t, svcWork), stored(t, sliceWork)}, deleted: []string{sliceWork.Name, svcWork.Name}},
		{name: "being deleted: left to finish", desired: desired, existing: []*workv1alpha1.Work{stored(t, svcWork), deleting}},
		{name: "a template's Work of the same name", desired: desired, existing: []*workv1alpha1.Work{stored(t, svcWork), foreign}, conflicts: []string{sliceWork.Name}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := Reconcile([]string{"ServiceImport"}, tc.desired, tc.existing)
			if err != nil {
				t.Fatal(err)
			}
			var upd, rel []string
			for _, u := range c.Update {
				upd = append(upd, u.Stored.Name)
			}
			for _, r := range c.Release {
				rel = append(rel, r.Stored.Name)
				if r.Managers != "Other" {
					t.Errorf("release leaves managers %q, want Other", r.Managers)
				}
			}
			sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
			for what, pair := range map[string][2][]string{
				"create": {workNames(c.Create), tc.create}, "update": {upd, tc.update}, "delete": {workNames(c.Delete), tc.deleted},
				"release": {rel, tc.release}, "conflicts": {workNames(c.Conflicts), tc.conflicts},
			} {
				if !slices.Equal(sorted(pair[0]), sorted(pair[1])) {
					t.Errorf("%s %v, want %v", what, pair[0], pair[1])
				}
			}
			if c.Empty() != (len(tc.create)+len(tc.update)+len(tc.deleted)+len(tc.release) == 0) {
				t.Errorf("Empty() = %v", c.Empty())
			}
		})
	}
}

// Sharing a Work: a second controller's desired Work keeps the first
// manager in the label; the patch carries both; releasing drops the
// labels asked for.
func TestSharedWorkPatches(t *testing.T) {
	t.Parallel()
	w, err := CollectedWork("member1", memberSlice(t, "web-a", "10.0.0.1"), "ServiceExport")
	if err != nil {
		t.Fatal(err)
	}
	cur := stored(t, w)
	cur.Labels["endpointslice.karmada.io/managed-by"] = "Other"
	c, err := Reconcile([]string{"ServiceExport", "MultiClusterService"}, []*workv1alpha1.Work{w}, []*workv1alpha1.Work{cur})
	if err != nil || len(c.Update) != 1 {
		t.Fatalf("Reconcile = %+v, %v", c, err)
	}
	patch, err := Patch(c.Update[0].Stored, c.Update[0].Desired)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Metadata struct {
			Labels     map[string]string `json:"labels"`
			Finalizers []string          `json:"finalizers"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	if p.Metadata.Labels["endpointslice.karmada.io/managed-by"] != "Other.ServiceExport" || p.Metadata.Labels[workv1alpha2.WorkPermanentIDLabel] == "" || p.Metadata.Finalizers != nil {
		t.Errorf("patch %s", patch)
	}
	cur.Labels["endpointslice.karmada.io/managed-by"] = "Other.ServiceExport"
	c, err = Reconcile([]string{"ServiceExport", "MultiClusterService"}, nil, []*workv1alpha1.Work{cur}, "endpointslice.karmada.io/namespace", "endpointslice.karmada.io/name")
	if err != nil || len(c.Release) != 1 {
		t.Fatalf("Reconcile = %+v, %v", c, err)
	}
	rel, err := ReleasePatch(c.Release[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"labels":{"endpointslice.karmada.io/managed-by":"Other","endpointslice.karmada.io/name":null,"endpointslice.karmada.io/namespace":null},"resourceVersion":"7"}}`
	if string(rel) != want {
		t.Errorf("release patch %s, want %s", rel, want)
	}
}
