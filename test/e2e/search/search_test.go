package search

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

const ns = "search-e2e"

var fixtureState struct {
	done, failed bool
}

// setup runs fixture once for the suite; a test after a failed fixture fails.
func setup(t *testing.T) {
	t.Helper()
	if fixtureState.failed {
		t.Fatal("the search fixture failed in an earlier test")
	}
	if fixtureState.done {
		return
	}
	fixtureState.failed = true
	fixture(t)
	fixtureState.failed, fixtureState.done = t.Failed(), true
}

// fixture creates, directly in the members, the objects the suite searches:
// web (member1) and api (member2) running nginx, shared in both, a pod
// with a log in member1, and a Secret in each; then a ResourceRegistry
// caching Deployments, Pods and (in ns) Secrets of both members.
func fixture(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	deploy := func(name, image string, lbls map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}}}}}
	}
	objs := map[string][]*appsv1.Deployment{
		"member1": {deploy("web", "nginx:1.19", map[string]string{"app": "web", "tier": "front"}), deploy("shared", "busybox:1.36", nil)},
		"member2": {deploy("api", "nginx:1.19", map[string]string{"app": "api"}), deploy("shared", "busybox:1.36", nil)},
	}
	for _, m := range []string{"member1", "member2"} {
		cs := member(t, m)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		for _, d := range objs[m] {
			if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token-" + m}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	framework.WaitPodsAdmitted(t, "member1", ns)
	framework.WaitPodsAdmitted(t, "member2", ns)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "logger", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	if _, err := member(t, "member1").CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reg := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "e2e"}, Spec: searchv1alpha1.ResourceRegistrySpec{
		TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		ResourceSelectors: []searchv1alpha1.ResourceSelector{
			{APIVersion: "apps/v1", Kind: "Deployment"}, {APIVersion: "v1", Kind: "Pod"}, {APIVersion: "v1", Kind: "Secret", Namespace: ns},
		},
	}}
	if _, err := karmada(t).SearchV1alpha1().ResourceRegistries().Create(ctx, reg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cond := waitRegistryReady(t, "e2e")
	for _, want := range []string{"apps/v1/deployments in member1, member2", "v1/pods in member1, member2", "v1/secrets in member1, member2"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("Ready message %q does not say %q", cond.Message, want)
		}
	}
}

type item struct {
	Metadata struct {
		Name, Namespace, ResourceVersion string
		Labels, Annotations              map[string]string
	}
}

type list struct {
	Kind, APIVersion string
	Metadata         struct{ ResourceVersion, Continue string }
	Items            []item
}

func getList(t *testing.T, ctx context.Context, path string) list {
	t.Helper()
	p, q, _ := strings.Cut(path, "?")
	values, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	r := kubernetes.NewForConfigOrDie(adminConfig(t)).CoreV1().RESTClient().Get().AbsPath(p)
	for k, v := range values {
		r = r.Param(k, v[0])
	}
	body, err := r.DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	var l list
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	return l
}

// names is "cluster/name" of each item.
func names(items []item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation] + "/" + it.Metadata.Name
	}
	return out
}

// waitList polls a list path until it holds want (cluster/name, in order).
func waitList(t *testing.T, path string, want []string) list {
	t.Helper()
	var l list
	err := wait.PollUntilContextTimeout(t.Context(), 300*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l = getList(t, ctx, path)
		return slices.Equal(names(l.Items), want), nil
	})
	if err != nil {
		t.Fatalf("GET %s: got %v, want %v", path, names(l.Items), want)
	}
	return l
}

// TestSearch: list and get across member1 and member2, selectors,
// pagination, the cluster plugin, watch and kubectl through the proxying
// endpoint.
func TestSearch(t *testing.T) {
	setup(t)
	deployments := searchPrefix + "cache/apis/apps/v1/namespaces/" + ns + "/deployments"
	all := []string{"member1/shared", "member1/web", "member2/api", "member2/shared"}

	t.Run("search/cache lists every member's objects, annotated", func(t *testing.T) {
		l := waitList(t, deployments, all)
		if l.Kind != "DeploymentList" || l.APIVersion != "apps/v1" {
			t.Errorf("list kind %s apiVersion %s", l.Kind, l.APIVersion)
		}
		rv := decodeRV(t, l.Metadata.ResourceVersion)
		if rv["member1"] == "" || rv["member2"] == "" {
			t.Errorf("list resourceVersion %s names %v, want both members", l.Metadata.ResourceVersion, rv)
		}
	})
	t.Run("label and field selectors", func(t *testing.T) {
		waitList(t, deployments+"?labelSelector=app%3Dweb", []string{"member1/web"})
		waitList(t, deployments+"?labelSelector=app+in+(web,api)", []string{"member1/web", "member2/api"})
		waitList(t, deployments+"?fieldSelector=metadata.name%3Dshared", []string{"member1/shared", "member2/shared"})
	})
	t.Run("pagination spans clusters", func(t *testing.T) {
		var got []string
		cont := ""
		for page := 0; page < 10; page++ {
			l := getList(t, t.Context(), deployments+"?limit=3&continue="+url.QueryEscape(cont))
			if len(l.Items) > 3 {
				t.Fatalf("page of %d items with limit 3", len(l.Items))
			}
			got = append(got, names(l.Items)...)
			if cont = l.Metadata.Continue; cont == "" {
				break
			}
		}
		if !slices.Equal(got, all) {
			t.Errorf("pages gave %v, want %v", got, all)
		}
	})
	t.Run("get through proxying", func(t *testing.T) {
		body, err := raw(t.Context(), adminConfig(t), proxyingPrefix+"/apis/apps/v1/namespaces/"+ns+"/deployments/web")
		if err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		var d appsv1.Deployment
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatal(err)
		}
		m1, _ := member(t, "member1").AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
		if d.Annotations[searchv1alpha1.CachedFromClusterAnnotation] != "member1" || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.19" {
			t.Errorf("got %v %v", d.Annotations, d.Spec.Template.Spec.Containers)
		}
		if rv := decodeRV(t, d.ResourceVersion); len(rv) != 1 || rv["member1"] == "" || m1 == nil {
			t.Errorf("resourceVersion %s decodes to %v, want member1's only", d.ResourceVersion, rv)
		}
	})
	t.Run("an ambiguous name is a conflict naming the clusters", func(t *testing.T) {
		cs := kubernetes.NewForConfigOrDie(through(adminConfig(t)))
		_, err := cs.AppsV1().Deployments(ns).Patch(t.Context(), "shared", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "member1, member2") {
			t.Errorf("patching shared: %v, want 409 naming member1, member2", err)
		}
	})
	t.Run("update through the cluster plugin lands in the owning member", func(t *testing.T) {
		cs := kubernetes.NewForConfigOrDie(through(adminConfig(t)))
		d, err := cs.AppsV1().Deployments(ns).Get(t.Context(), "api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.Labels["updated"] = "through-proxying"
		if _, err := cs.AppsV1().Deployments(ns).Update(t.Context(), d, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update: %v", err)
		}
		t.Cleanup(func() {
			_, _ = member(t, "member2").AppsV1().Deployments(ns).Patch(context.Background(), "api", types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"updated":null}}}`), metav1.PatchOptions{})
		})
		got, err := member(t, "member2").AppsV1().Deployments(ns).Get(t.Context(), "api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Labels["updated"] != "through-proxying" {
			t.Errorf("member2's api labels %v", got.Labels)
		}
		if _, ok := got.Annotations[searchv1alpha1.CachedFromClusterAnnotation]; ok {
			t.Errorf("the cache's annotation reached the member: %v", got.Annotations)
		}
		// A delete of something nowhere is a 404.
		if err := cs.AppsV1().Deployments(ns).Delete(t.Context(), "nowhere", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("deleting a missing deployment: %v, want 404", err)
		}
	})
	t.Run("watch sees both members and resumes", func(t *testing.T) { testWatch(t) })
	t.Run("kubectl get and logs through a proxying kubeconfig", func(t *testing.T) { testKubectl(t) })
}

func decodeRV(t *testing.T, rv string) map[string]string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(rv)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	out := map[string]string{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("resourceVersion %q = %s: %v", rv, raw, err)
	}
	return out
}

func testWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(through(adminConfig(t)))
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	newPod := func(m, name string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := member(t, m).CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = member(t, m).CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	// await returns the resourceVersion of the first event about name.
	await := func(w watch.Interface, name, cluster string) string {
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("watch closed before an event about %s", name)
				}
				p, isPod := ev.Object.(*corev1.Pod)
				if !isPod || p.Name != name {
					continue
				}
				if got := p.Annotations[searchv1alpha1.CachedFromClusterAnnotation]; got != cluster {
					t.Errorf("event about %s annotated %q, want %s", name, got, cluster)
				}
				return p.ResourceVersion
			case <-ctx.Done():
				t.Fatalf("no event about %s", name)
			}
		}
	}
	newPod("member2", "watched-2")
	rv2 := await(w, "watched-2", "member2")
	newPod("member1", "watched-1")
	await(w, "watched-1", "member1")
	if m := decodeRV(t, rv2); m["member1"] == "" || m["member2"] == "" {
		t.Errorf("event resourceVersion %v, want both clusters'", m)
	}
	// Resuming from the event about watched-2 replays what followed it.
	w2, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv2})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	await(w2, "watched-1", "member1")
	// A malformed resourceVersion is a 400.
	if _, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: "not-a-version"}); !apierrors.IsBadRequest(err) {
		t.Errorf("watch from a malformed resourceVersion: %v, want 400", err)
	}
}

func testKubectl(t *testing.T) {
	ctx := t.Context()
	err := wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := member(t, "member1").CoreV1().Pods(ns).Get(ctx, "logger", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("logger not running: %v", err)
	}
	kc := kubeconfigFor(t, adminConfig(t), proxyingPrefix)
	var out string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		out, err = kubectlAs(t, kc, "get", "pods", "-A", "-o", "wide")
		return err == nil && strings.Contains(out, "logger") && strings.Count(out, "\n") >= 4, nil
	})
	if err != nil {
		t.Fatalf("kubectl get pods -A -o wide: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Fields(lines[0]); !slices.Equal(got[:6], []string{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"}) || !slices.Contains(got, "NODE") {
		t.Errorf("header %v, want kube-apiserver's pod columns", got)
	}
	var logger string
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 3 && f[1] == "logger" {
			logger = l
		}
	}
	if f := strings.Fields(logger); len(f) < 4 || f[0] != ns || f[2] != "1/1" || f[3] != "Running" {
		t.Errorf("logger row %q, want %s logger 1/1 Running", logger, ns)
	}
	pods := 0
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, ns+" ") {
			pods++
		}
	}
	if pods < 4 {
		t.Errorf("%d pods of %s listed, want at least web, shared, api, shared and logger:\n%s", pods, ns, out)
	}
	out, err = kubectlAs(t, kc, "-n", ns, "logs", "logger")
	if err != nil || !strings.Contains(out, "kwok pod log") {
		t.Errorf("kubectl logs through proxying: %v: %s", err, out)
	}
	out, err = kubectlAs(t, kc, "-n", ns, "exec", "logger", "--", "echo", "hello-through-proxying")
	if err != nil || !strings.Contains(out, "hello-through-proxying") {
		t.Errorf("kubectl exec through proxying: %v: %s", err, out)
	}
	out, err = kubectlAs(t, kc, "-n", ns, "get", "deployment", "web", "-o", "jsonpath={.metadata.annotations}")
	if err != nil || !strings.Contains(out, fmt.Sprintf("%q:%q", searchv1alpha1.CachedFromClusterAnnotation, "member1")) {
		t.Errorf("kubectl get deployment web -o jsonpath: %v: %s", err, out)
	}
}
