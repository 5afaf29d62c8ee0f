package console

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// startConsole runs `flotillactl console` with kubeconfig (and more
// flags) and returns its URL; it stops with the test.
func startConsole(t *testing.T, kubeconfig string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "flotillactl"),
		append([]string{"console", "--kubeconfig=" + kubeconfig, "--port=0"}, flags...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+t.TempDir())
	// It dies with the test binary, even one killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("flotillactl console printed nothing: %v", lines.Err())
	}
	line := lines.Text()
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("flotillactl console printed %q, want its URL", line)
	}
	url := strings.Fields(line[i:])[0]
	go func() {
		for lines.Scan() {
		}
	}()
	return url
}

// browser returns a headless Chromium tab that ends with the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 900), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first run starts the browser, for as long as ctx lives.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// screenshot saves the tab as _output/console/<name>.png.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "_output", "console")
	_ = os.MkdirAll(dir, 0o755)
	sctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Error(err)
	}
}

// actionTimeout bounds one action in the browser.
const actionTimeout = 20 * time.Second

// evaluate runs a script in the tab, within actionTimeout.
func evaluate[T any](ctx context.Context, script string) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](script))
}

// text is the rendered text of the first element sel matches ("" if none).
func text(ctx context.Context, sel string) (string, error) {
	return evaluate[string](ctx, fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ""`, sel))
}

// attr is an attribute of the first element sel matches ("" if none).
func attr(ctx context.Context, sel, name string) string {
	v, _ := evaluate[string](ctx, fmt.Sprintf(`((e) => e ? (e.getAttribute(%q) || "") : "")(document.querySelector(%q))`, name, sel))
	return v
}

// click clicks the first element sel matches, as a user would (a button
// submits its form), and waits until ready, run on the page, returns "".
func click(t *testing.T, ctx context.Context, sel string, ready func() string) {
	t.Helper()
	ok, err := evaluate[bool](ctx, fmt.Sprintf(`((e) => { if (!e) { return false; } e.click(); return true; })(document.querySelector(%q))`, sel))
	if err != nil || !ok {
		t.Fatalf("clicking %s: found %v, %v", sel, ok, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for msg := ready(); msg != ""; msg = ready() {
		if time.Now().After(deadline) {
			screenshot(t, ctx, "failed-"+strings.NewReplacer(" ", "", "[", "", "]", "", `"`, "", "/", "-").Replace(sel))
			t.Fatalf("after clicking %s: %s", sel, msg)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// eventually navigates to url and waits until check, run on the page,
// returns "" (reloading between tries when reload is set).
func eventually(t *testing.T, ctx context.Context, url string, within time.Duration, reload bool, check func() string) {
	t.Helper()
	nctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	if err := chromedp.Do(nctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
	poll(t, url, within, 500*time.Millisecond, func() string {
		if !reload {
			return check()
		}
		msg := check()
		if msg != "" {
			rctx, cancel := context.WithTimeout(ctx, actionTimeout)
			err := chromedp.Do(rctx, chromedp.Reload())
			cancel()
			if err != nil {
				t.Fatalf("reloading %s: %v", url, err)
			}
		}
		return msg
	})
}

// poll calls check every interval until it returns "", failing the test
// with its last word, about what, after within.
func poll(t *testing.T, what string, within, interval time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %s: %s", what, within, msg)
		}
		time.Sleep(interval)
	}
}

// onPage checks the open page every 50 ms, without reloading it, until
// check returns "".
func onPage(t *testing.T, within time.Duration, check func() string) {
	t.Helper()
	poll(t, "the open page", within, 50*time.Millisecond, check)
}

// TestOverviewShowsMembers: the fleet page lists member1 and member2,
// Ready, with their mode, version and nodes; the page is timed.
func TestOverviewShowsMembers(t *testing.T) {
	url := startConsole(t, framework.Env.Host.Kubeconfig)
	ctx := browser(t)
	start := time.Now()
	eventually(t, ctx, url, time.Minute, true, func() string {
		for _, m := range []string{"member1", "member2"} {
			if c := attr(ctx, `tr[data-cluster="`+m+`"]`, "class"); c != "healthy" {
				return fmt.Sprintf("%s row class %q, want healthy", m, c)
			}
		}
		return ""
	})
	t.Logf("overview rendered with both members Ready in %s", time.Since(start).Round(time.Millisecond))
	row, err := text(ctx, `tr[data-cluster="member1"]`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"member1", "Push", "True", "v1."} {
		if !strings.Contains(row, want) {
			t.Errorf("member1's row %q lacks %q", row, want)
		}
	}
	if s, _ := text(ctx, "#summary"); !strings.Contains(s, "2 of 2 clusters Ready") {
		t.Errorf("summary %q", s)
	}
	screenshot(t, ctx, "overview")

	// A change of a Cluster reaches the open page by its watch: a taint
	// shows in member1's row without a reload.
	taint := `{"spec":{"taints":[{"key":"console-e2e","value":"live","effect":"NoSchedule"}]}}`
	clusters := framework.Karmada(t).ClusterV1alpha1().Clusters()
	changed := time.Now()
	if _, err := clusters.Patch(t.Context(), "member1", types.MergePatchType, []byte(taint), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = clusters.Patch(context.Background(), "member1", types.MergePatchType, []byte(`{"spec":{"taints":null}}`), metav1.PatchOptions{})
	})
	for {
		if s, _ := text(ctx, `tr[data-cluster="member1"]`); strings.Contains(s, "console-e2e=live:NoSchedule") {
			break
		}
		if time.Since(changed) > 10*time.Second {
			t.Fatal("member1's new taint not on the open page after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("a Cluster's change reached the open page %s after the write", time.Since(changed).Round(time.Millisecond))
	if _, err := clusters.Patch(t.Context(), "member1", types.MergePatchType, []byte(`{"spec":{"taints":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestWorkloadInMatrix: a Deployment divided over member1 and member2
// appears in the workloads matrix with one replica in each, healthy, and
// its page shows the placement.
func TestWorkloadInMatrix(t *testing.T) {
	ns := framework.Namespace(t, "console-matrix")
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: nginx:1.27}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
          - {targetCluster: {clusterNames: [member1]}, weight: 1}
          - {targetCluster: {clusterNames: [member2]}, weight: 1}
`, ns))
	url := startConsole(t, framework.Env.Host.Kubeconfig)
	ctx := browser(t)
	row := `tr[data-workload="` + ns + `/web-deployment"]`
	eventually(t, ctx, url+"workloads?namespace="+ns, 2*time.Minute, true, func() string {
		if c := attr(ctx, row, "class"); c != "healthy" {
			s, _ := text(ctx, row)
			return fmt.Sprintf("row class %q (%q), want healthy", c, s)
		}
		return ""
	})
	cells, err := text(ctx, row)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(cells, "1") < 2 || !strings.Contains(cells, "web") || !strings.Contains(cells, "Deployment") {
		t.Errorf("matrix row %q: want web, Deployment, 1 replica in each member", cells)
	}
	screenshot(t, ctx, "workloads")
	// Live: scaled to 4, the open page shows 2 in each member, no reload.
	scaled := time.Now()
	if _, err := framework.HostClient(t).AppsV1().Deployments(ns).Patch(t.Context(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	onPage(t, 30*time.Second, func() string {
		cells, _ := evaluate[string](ctx, `Array.from(document.querySelectorAll('`+row+` td.cell')).map(c => c.firstChild ? c.firstChild.textContent : "").join(",")`)
		if cells != "2,2" {
			return fmt.Sprintf("the open page's cells %q, want 2,2", cells)
		}
		return ""
	})
	t.Logf("scaled to 4: the open workloads page showed 2 in each member %s later (the scheduler's decision included)", time.Since(scaled).Round(time.Millisecond))
	eventually(t, ctx, url+"workloads/"+ns+"/web-deployment", 30*time.Second, true, func() string {
		s, _ := text(ctx, "#placement")
		if !strings.Contains(s, "member1") || !strings.Contains(s, "member2") {
			return "placement " + s
		}
		return ""
	})
	// Why it runs there: the explain subresource, a row per cluster.
	if s, _ := text(ctx, "#explanation"); !strings.Contains(s, "member1\tyes\t2") || !strings.Contains(s, "member2\tyes\t2") {
		t.Errorf("the explanation %q: want member1 and member2 placed with 2 replicas each (4 divided by equal weights)", s)
	}
	// What drifted: the image changed in member1 as `kubectl set image`
	// would; Flotilla writes it back and the page lists the field.
	if _, err := framework.MemberClient(t, "member1").AppsV1().Deployments(ns).Patch(t.Context(), "web", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:9.9"}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The drift is listed once detected, and member1's Work says
	// DriftCorrected once it is written back (DriftDetected before).
	eventually(t, ctx, url+"workloads/"+ns+"/web-deployment", 30*time.Second, true, func() string {
		s, _ := text(ctx, "#drift")
		if !strings.Contains(s, "member1") || !strings.Contains(s, "spec.template.spec.containers[name=nginx].image") ||
			!strings.Contains(s, `"nginx:9.9"`) || !strings.Contains(s, `"nginx:1.27"`) {
			return "drift " + s
		}
		if w, _ := text(ctx, "#works"); !strings.Contains(w, "DriftCorrected") {
			return "the Works " + w + ": want member1's Drifted condition (DriftCorrected)"
		}
		return ""
	})
	screenshot(t, ctx, "workload")

	// The policies page: the policy, what it selects and the template it
	// claims; the events page: the binding's scheduling.
	eventually(t, ctx, url+"policies?namespace="+ns, 30*time.Second, true, func() string {
		s, _ := text(ctx, "#propagation")
		if !strings.Contains(s, "PropagationPolicy "+ns+"/web") || !strings.Contains(s, "Deployment "+ns+"/web") {
			return "policies " + s
		}
		return ""
	})
	eventually(t, ctx, url+"events?namespace="+ns, 30*time.Second, true, func() string {
		s, _ := text(ctx, "main table")
		if !strings.Contains(s, "ScheduleBindingSucceed") || !strings.Contains(s, "web-deployment") {
			return "events " + s
		}
		return ""
	})
}

// TestStoppedMemberTurnsUnready: with the overview open, member2's
// kube-apiserver stops; its row turns unhealthy by a live update (no
// reload) within the cluster-status interval, and its page says the
// member is unreachable without blocking.
func TestStoppedMemberTurnsUnready(t *testing.T) {
	url := startConsole(t, framework.Env.Host.Kubeconfig)
	ctx := browser(t)
	eventually(t, ctx, url, time.Minute, true, func() string {
		if c := attr(ctx, `tr[data-cluster="member2"]`, "class"); c != "healthy" {
			return "member2 row class " + c
		}
		return ""
	})
	framework.StopMember(t, "member2")
	stopped := time.Now()
	deadline := stopped.Add(45 * time.Second)
	for attr(ctx, `tr[data-cluster="member2"]`, "class") != "unhealthy" {
		if time.Now().After(deadline) {
			s, _ := text(ctx, `tr[data-cluster="member2"]`)
			t.Fatalf("member2 still shown as %q 45 s after it stopped", s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("member2 shown not Ready %s after it stopped, without a reload", time.Since(stopped).Round(time.Millisecond))
	if c := attr(ctx, `.tile[data-cluster="member2"]`, "class"); !strings.Contains(c, "unhealthy") {
		t.Errorf("member2's tile class %q, want unhealthy", c)
	}
	screenshot(t, ctx, "member-down")
	start := time.Now()
	eventually(t, ctx, url+"clusters/member2", 30*time.Second, false, func() string {
		if s, _ := text(ctx, ".unreachable"); !strings.Contains(s, "member2 is unreachable") {
			return "no unreachable message: " + s
		}
		return ""
	})
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the page of a member that is down took %s", took)
	}
	screenshot(t, ctx, "cluster-unreachable")
}

// TestSearchFindsMemberPod: the search page finds a member's pod through
// the search cache, and its link shows the pod read through the proxy.
func TestSearchFindsMemberPod(t *testing.T) {
	framework.ApplySample(t, "search.yaml")
	ns := framework.Namespace(t, "console-search")
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: finder, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: finder}}
  template:
    metadata: {labels: {app: finder}}
    spec: {containers: [{name: nginx, image: nginx:1.27}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: finder, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: finder}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns))
	url := startConsole(t, framework.Env.Host.Kubeconfig)
	ctx := browser(t)
	q := "kind:Pod namespace:" + ns
	eventually(t, ctx, url+"search?q="+strings.ReplaceAll(q, " ", "+"), 2*time.Minute, true, func() string {
		s, _ := text(ctx, "#hits")
		if !strings.Contains(s, "member1") || !strings.Contains(s, "finder-") {
			t, _ := text(ctx, "main")
			return "hits: " + t
		}
		return ""
	})
	screenshot(t, ctx, "search")
	click(t, ctx, `#hits a`, func() string {
		if y, _ := text(ctx, "#yaml"); y == "" {
			return "no YAML yet"
		}
		return ""
	})
	if y, _ := text(ctx, "#yaml"); !strings.Contains(y, "kind: Pod") || !strings.Contains(y, "namespace: "+ns) {
		t.Errorf("the pod's YAML: %q", y)
	}
	screenshot(t, ctx, "object")
}

// TestUserSeesOnlyTheirMember: a user who may list clusters and reach
// member1's proxy (and whom member1 lets read events) sees member1's
// events, and for member2 the control plane's refusal.
func TestUserSeesOnlyTheirMember(t *testing.T) {
	cfg := framework.ProxyServiceAccountConfig(t, "console-viewer", "member1")
	grant(t, "console-viewer", rbacv1.PolicyRule{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters"}, Verbs: []string{"get", "list", "watch"}})
	// In member1 the member's own RBAC lets the user read events.
	m1 := framework.MemberClient(t, "member1")
	user := "system:serviceaccount:default:console-viewer"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "console-viewer-events"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"list"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "console-viewer-events"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: user}}}
	if _, err := m1.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := m1.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m1.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
		_ = m1.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
	url := startConsole(t, kubeconfigOf(t, cfg))
	ctx := browser(t)
	eventually(t, ctx, url+"clusters/member2", 30*time.Second, true, func() string {
		if s, _ := text(ctx, ".unreachable"); !strings.Contains(s, "Not allowed") && !strings.Contains(s, "forbidden") {
			return "member2 page: " + s
		}
		return ""
	})
	screenshot(t, ctx, "refused-member")
	eventually(t, ctx, url+"clusters/member1", 30*time.Second, true, func() string {
		if s, _ := text(ctx, ".unreachable"); s != "" {
			return "member1 page: " + s
		}
		return ""
	})
	// The workloads page is refused as a whole: the user may not list
	// bindings, and the page says so.
	eventually(t, ctx, url+"workloads", 30*time.Second, false, func() string {
		if s, _ := text(ctx, `[role="alert"]`); !strings.Contains(s, "Not allowed") {
			return "workloads page: " + s
		}
		return ""
	})
}

// kubeconfigOf writes a kubeconfig with cfg's server and bearer token.
func kubeconfigOf(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	user := ""
	if cfg.BearerToken != "" {
		user = fmt.Sprintf("token: %q", cfg.BearerToken)
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: u, user: {%s}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, cfg.Host, base64.StdEncoding.EncodeToString(ca), user)
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// grant gives the service account default/<account> rule on the whole
// control plane (a ClusterRole and its binding, both named
// <account>-console), removed when the test ends.
func grant(t *testing.T, account string, rule rbacv1.PolicyRule) {
	t.Helper()
	host, err := framework.Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	name := account + "-console"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: account}}}
	if _, err := host.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := host.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = host.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// TestLoginMode: the console as the chart runs it (--login): its
// kubeconfig gives the control plane's address and CA only; a user logs in
// with a token of their own and sees the fleet as that user; a token the
// control plane refuses is not taken.
func TestLoginMode(t *testing.T) {
	cfg := framework.ServiceAccountConfig(t, "console-login")
	grant(t, "console-login", rbacv1.PolicyRule{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters"}, Verbs: []string{"get", "list", "watch"}})
	// A kubeconfig without credentials: the console must not need any.
	anonymous := kubeconfigOf(t, &rest.Config{Host: cfg.Host, TLSClientConfig: cfg.TLSClientConfig})
	url := startConsole(t, anonymous, "--login")
	ctx := browser(t)
	eventually(t, ctx, url, 30*time.Second, false, func() string {
		if s, _ := text(ctx, "form.login"); !strings.Contains(s, "Bearer token") {
			return "no login page: " + s
		}
		return ""
	})
	login := func(token string) {
		t.Helper()
		if _, err := evaluate[bool](ctx, fmt.Sprintf(`(document.getElementById("bearer").value = %q, true)`, token)); err != nil {
			t.Fatal(err)
		}
	}
	login("not-a-token")
	click(t, ctx, `form.login button`, func() string {
		if s, _ := text(ctx, `[role="alert"]`); !strings.Contains(s, "does not accept this token") {
			return "no refusal: " + s
		}
		return ""
	})
	login(cfg.BearerToken)
	click(t, ctx, `form.login button`, func() string {
		if c := attr(ctx, `tr[data-cluster="member1"]`, "class"); c == "" {
			body, _ := text(ctx, "main")
			return "no fleet after logging in: " + body
		}
		return ""
	})
	screenshot(t, ctx, "login-fleet")
	// What the user may not read is refused as the user.
	eventually(t, ctx, url+"workloads", 20*time.Second, false, func() string {
		if s, _ := text(ctx, `[role="alert"]`); !strings.Contains(s, "Not allowed") || !strings.Contains(s, "console-login") {
			return "workloads page: " + s
		}
		return ""
	})
}
