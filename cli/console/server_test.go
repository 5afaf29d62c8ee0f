package console

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

// The pages render what the user's clients return, and say so when the
// control plane refuses the user.
func TestPages(t *testing.T) {
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue}
	karmada := karmadafake.NewSimpleClientset(
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}, Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{ready}}},
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}},
		&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
			Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}},
		&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment",
			Labels:      map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "b-1"},
			Annotations: map[string]string{policyv1alpha1.PropagationPolicyNameAnnotation: "web", policyv1alpha1.PropagationPolicyNamespaceAnnotation: "shop"}},
			Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{Kind: "Deployment", Namespace: "shop", Name: "web"},
				Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}}}},
		&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionNamespace("member1"), Name: "web-deployment",
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "b-1"}},
			Status: workv1alpha1.WorkStatus{
				Conditions: []metav1.Condition{{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionTrue, Reason: workv1alpha1.WorkDriftDetectedReason, Message: "spec.replicas differs"}},
				ManifestStatuses: []workv1alpha1.ManifestStatus{{Identifier: workv1alpha1.ResourceIdentifier{Kind: "Deployment", Namespace: "shop", Name: "web"},
					Drift: []workv1alpha1.DriftedField{{Path: "spec.replicas", ValueInMember: "5", ValueApplied: "2"}}}}}},
	)
	s, err := newServer(kubefake.NewSimpleClientset(), karmada)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()

	code, body := get(t, h, "/")
	if code != http.StatusOK || !strings.Contains(body, `data-cluster="member1" class="healthy"`) || !strings.Contains(body, `data-cluster="member2" class="unknown"`) ||
		!strings.Contains(body, "1 of 2 clusters Ready.") {
		t.Errorf("overview: %d\n%s", code, body)
	}
	code, body = get(t, h, "/workloads")
	if code != http.StatusOK || !strings.Contains(body, `href="/workloads/shop/web-deployment"`) || !strings.Contains(body, `<th scope="col">member2</th>`) {
		t.Errorf("workloads: %d\n%s", code, body)
	}
	s.explain = func(_ context.Context, _ versioned.Interface, ns, name string) (*flotillav1alpha1.PlacementExplanation, error) {
		if ns != "shop" || name != "web-deployment" {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: "work.karmada.io", Resource: "resourcebindings"}, name)
		}
		return &flotillav1alpha1.PlacementExplanation{Estimator: flotillav1alpha1.EstimatorAccurate, Scheduled: true,
			Clusters: []flotillav1alpha1.ClusterPlacement{{Name: "member1", Selected: true, Replicas: 2, Message: "placed"},
				{Name: "member2", Reason: flotillav1alpha1.ReasonTaintNotTolerated, Message: "taint dedicated=gpu:NoSchedule not tolerated"}}}, nil
	}
	code, body = get(t, h, "/workloads/shop/web-deployment")
	for _, want := range []string{"Deployment shop/web", "Accurate estimate", "<th scope=\"row\">member2</th><td>no</td>", "TaintNotTolerated</td><td>taint dedicated=gpu:NoSchedule not tolerated",
		"<td><code>spec.replicas</code></td><td><code>5</code></td><td><code>2</code></td>", "True (DriftDetected)"} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("workload: %d, want %q in\n%s", code, want, body)
		}
	}
	code, body = get(t, h, "/policies")
	if code != http.StatusOK || !strings.Contains(body, "Deployment named web") || !strings.Contains(body, "<td>Deployment shop/web</td>") {
		t.Errorf("policies: %d\n%s", code, body)
	}
	for _, bad := range []string{"/object?path=/api/v1/secrets", "/object?cluster=m1&apiVersion=v1&kind=Pod&name=..%2F..%2Fsecrets",
		"/object?cluster=m1&apiVersion=a/b/c&kind=Pod&name=x", "/object?cluster=m1&apiVersion=v1&kind=Pod&namespace=a/b&name=x"} {
		if code, _ := get(t, h, bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
	code, _ = get(t, h, "/static/console.css")
	if code != http.StatusOK {
		t.Errorf("static: %d", code)
	}

	// A user who may not list clusters reads the server's refusal.
	karmada.PrependReactor("list", "clusters", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "cluster.karmada.io", Resource: "clusters"}, "", nil)
	})
	_, body = get(t, h, "/")
	if !strings.Contains(body, `role="alert">Not allowed:`) {
		t.Errorf("overview refused: %s", body)
	}
}

// The rollouts page shows a run's stages and the approval it waits for;
// an approve form posts the same patch flotillactl rollout approve makes,
// and a post without the console's token is refused.
func TestRolloutActions(t *testing.T) {
	run := &flotillav1alpha1.RolloutRun{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", ResourceVersion: "7"},
		Spec: flotillav1alpha1.RolloutRunSpec{Resource: flotillav1alpha1.RolloutResource{Kind: "Deployment", Name: "web"}, Strategy: "canary"},
		Status: flotillav1alpha1.RolloutRunStatus{Phase: flotillav1alpha1.RolloutWaitingForApproval, CurrentStage: "prod",
			Stages: []flotillav1alpha1.StageStatus{
				{Name: "canary", Phase: flotillav1alpha1.StageSucceeded, Clusters: []flotillav1alpha1.ClusterRolloutStatus{{Name: "member1", Health: flotillav1alpha1.ClusterHealthy}}},
				{Name: "prod", Phase: flotillav1alpha1.StageWaitingApproval, WaitingFor: flotillav1alpha1.GateBefore},
			}}}
	karmada := karmadafake.NewSimpleClientset(run)
	s, err := newServer(kubefake.NewSimpleClientset(), karmada)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	code, body := get(t, h, "/rollouts")
	if code != http.StatusOK || !strings.Contains(body, "Approve prod (Before)") || !strings.Contains(body, "member1: Healthy") {
		t.Fatalf("rollouts: %d\n%s", code, body)
	}
	post := func(form string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/rollouts/shop/web-1/approve", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := post("token=wrong"); rec.Code != http.StatusForbidden {
		t.Errorf("a post without the token: %d, want 403", rec.Code)
	}
	if rec := post("token=" + s.token); rec.Code != http.StatusSeeOther {
		t.Fatalf("approve: %d %s", rec.Code, rec.Body.String())
	}
	got, err := karmada.FlotillaV1alpha1().RolloutRuns("shop").Get(t.Context(), "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Approvals) != 1 || got.Spec.Approvals[0].Stage != "prod" || got.Spec.Approvals[0].Gate != flotillav1alpha1.GateBefore {
		t.Errorf("approvals %+v, want prod Before", got.Spec.Approvals)
	}
}

// liveStream opens the console's live stream at path, its watches of
// resource served by the fake watch it returns.
func liveStream(t *testing.T, resource, path string) (*http.Response, *watch.FakeWatcher) {
	t.Helper()
	karmada := karmadafake.NewSimpleClientset()
	fw := watch.NewFake()
	karmada.PrependWatchReactor(resource, clienttesting.DefaultWatchReactor(fw, nil))
	s, err := newServer(kubefake.NewSimpleClientset(), karmada)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp, fw
}

// The fleet's live stream sends a changed cluster's rendered row, and asks
// the page to list again when its list is too old to watch from.
func TestLiveClusters(t *testing.T) {
	resp, fw := liveStream(t, "clusters", "/live/clusters?rv=5")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	go func() {
		fw.Modify(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"},
			Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Down"}}}})
		fw.Error(&metav1.Status{Code: http.StatusGone, Reason: metav1.StatusReasonExpired})
	}()
	body, _ := io.ReadAll(resp.Body) // the stream ends after the reload
	got := string(body)
	if !strings.Contains(got, "event: cluster\n") || !strings.Contains(got, `data-cluster=\"member1\" class=\"unhealthy\"`) {
		t.Errorf("no rendered row for member1:\n%s", got)
	}
	if !strings.HasSuffix(got, "event: reload\ndata: {}\n\n") {
		t.Errorf("the stream does not end asking for a reload:\n%s", got)
	}
}

// The rollouts page's live stream sends a changed run rendered as its
// section, with the actions it allows now, and a deleted run's key.
func TestLiveRollouts(t *testing.T) {
	resp, fw := liveStream(t, "rolloutruns", "/live/rollouts?namespace=shop&rv=7")
	run := &flotillav1alpha1.RolloutRun{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"},
		Spec:   flotillav1alpha1.RolloutRunSpec{Strategy: "canary", Paused: true},
		Status: flotillav1alpha1.RolloutRunStatus{Phase: flotillav1alpha1.RolloutProgressing, CurrentStage: "s1"}}
	go func() {
		fw.Modify(run)
		fw.Delete(run)
		fw.Stop()
	}()
	body, _ := io.ReadAll(resp.Body)
	got := string(body)
	for _, want := range []string{"event: run\n", `data-run=\"shop/web-1\"`, `class=\"resume\"`, `"deleted":"true","name":"shop/web-1"`} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in the stream:\n%s", want, got)
		}
	}
	if strings.Contains(got, `class=\"pause\"`) {
		t.Errorf("a paused run offers Pause:\n%s", got)
	}
	// The page streams from its list's resourceVersion.
	karmada2 := karmadafake.NewSimpleClientset(run)
	s2, err := newServer(kubefake.NewSimpleClientset(), karmada2)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, s2.Handler(), "/rollouts?namespace=shop"); code != http.StatusOK || !strings.Contains(body, `data-live="/live/rollouts?namespace=shop&amp;rv=`) {
		t.Errorf("rollouts page: %d\n%s", code, body)
	}
}

// The workloads page's live stream sends a changed binding rendered as its
// matrix row over the page's clusters, and has the page list again when a
// binding is placed on a cluster the page has no column for.
func TestLiveWorkloads(t *testing.T) {
	resp, fw := liveStream(t, "resourcebindings", "/live/workloads?namespace=shop&rv=9&clusters=member1,member2")
	binding := func(clusters ...string) *workv1alpha2.ResourceBinding {
		b := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"},
			Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{Kind: "Deployment", Namespace: "shop", Name: "web"}}}
		for _, c := range clusters {
			b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 3})
		}
		return b
	}
	go func() {
		fw.Modify(binding("member2"))
		fw.Modify(binding("member3"))
	}()
	body, _ := io.ReadAll(resp.Body) // the stream ends after the reload
	got := string(body)
	// member1's cell empty, member2's with its 3 replicas.
	if !strings.Contains(got, "event: workload\n") || !strings.Contains(got, `data-workload=\"shop/web-deployment\"`) ||
		!strings.Contains(got, `not placed\u003c/span\u003e\u003c/td\u003e\u003ctd class=\"cell `) || !strings.Contains(got, `\u003e3\u003cspan`) {
		t.Errorf("no row over member1 and member2:\n%s", got)
	}
	if !strings.HasSuffix(got, "event: reload\ndata: {}\n\n") {
		t.Errorf("a binding on a cluster without a column did not have the page list again:\n%s", got)
	}
}

// The object page finds the object's resource in the member's discovery
// (read once, through the proxy), reads the object through the proxy and
// shows its YAML; a kind the member does not serve is said so.
func TestObjectPage(t *testing.T) {
	var discoveries, reads int
	const member = "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case member + "/apis/networking.k8s.io/v1":
			discoveries++
			_, _ = io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"networking.k8s.io/v1","resources":[
				{"name":"ingresses/status","kind":"Ingress","namespaced":true,"verbs":["get"]},
				{"name":"ingresses","kind":"Ingress","namespaced":true,"verbs":["get"]}]}`)
		case member + "/apis/networking.k8s.io/v1/namespaces/shop/ingresses/web":
			reads++
			_, _ = io.WriteString(w, `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"web","namespace":"shop"}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServer(kube, karmadafake.NewSimpleClientset())
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	link := objectLink("member1", "networking.k8s.io/v1", "Ingress", "shop", "web")
	for range 2 {
		code, body := get(t, h, link)
		if code != http.StatusOK || !strings.Contains(body, "kind: Ingress") || !strings.Contains(body, member+"/apis/networking.k8s.io/v1/namespaces/shop/ingresses/web") {
			t.Fatalf("object page: %d\n%s", code, body)
		}
	}
	if discoveries != 1 || reads != 2 {
		t.Errorf("discovery read %d times, the object %d, want 1 and 2", discoveries, reads)
	}
	code, body := get(t, h, objectLink("member1", "networking.k8s.io/v1", "Gateway", "shop", "web"))
	if code != http.StatusOK || !strings.Contains(body, "member1 does not serve Gateway in networking.k8s.io/v1") {
		t.Errorf("a kind the member does not serve: %d\n%s", code, body)
	}
}
