package install

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/charts"
	"github.com/flotilla-io/flotilla/cli/chartapply"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// hostClients returns the host's config and the installer's clients.
func hostClients(t *testing.T) (*rest.Config, chartapply.Clients) {
	t.Helper()
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	clients, err := chartapply.NewClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, clients
}

// createNamespace creates a namespace for the test and deletes it after.
func createNamespace(t *testing.T, core kubernetes.Interface, name string) {
	t.Helper()
	ctx := t.Context()
	if _, err := core.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = core.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// Every object the chart renders, in each etcd mode, passes the host's
// validation and admission (server-side apply with dryRun=All), and
// nothing is stored.
func TestChartServerDryRun(t *testing.T) {
	cfg, clients := hostClients(t)
	chrt, err := charts.Load(charts.FlotillaChart)
	if err != nil {
		t.Fatal(err)
	}
	type valueSet struct {
		name   string
		values map[string]any
	}
	sets := []valueSet{
		{name: "bundled"},
		{name: "embedded", values: map[string]any{"etcd": map[string]any{"mode": "embedded"}, "apiserver": map[string]any{"replicas": 1}}},
		{name: "external", values: map[string]any{"etcd": map[string]any{"mode": "external", "external": map[string]any{
			"endpoints": []any{"https://etcd-0.example:2379"}, "clientCertSecret": "etcd-client"}}}},
	}
	// The samples of samples/install, but cert-manager's (the host has
	// no cert-manager to take its Certificates).
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"external-etcd", "single-replica"} {
		vals, err := chartutil.ReadValuesFile(filepath.Join(root, "samples", "install", f+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, valueSet{name: "sample-" + f, values: vals})
	}
	for _, tc := range sets {
		t.Run(tc.name, func(t *testing.T) {
			ns := "dryrun-" + tc.name
			createNamespace(t, clients.Core, ns)
			r, err := charts.Render(chrt, charts.Release{Name: "flotilla", Namespace: ns, Values: tc.values}, cfg)
			if err != nil {
				t.Fatalf("rendering: %v", err)
			}
			var out strings.Builder
			in := &chartapply.Installer{Clients: clients, Release: "flotilla", Namespace: ns, DryRun: true, Out: &out}
			inv, err := in.Apply(t.Context(), r.Objects)
			if err != nil {
				t.Fatalf("server dry run: %v\n%s", err, out.String())
			}
			if len(inv.Objects) != len(r.Objects) {
				t.Errorf("%d objects applied, %d rendered", len(inv.Objects), len(r.Objects))
			}
			// Nothing was stored.
			for _, o := range r.Objects {
				if _, err := get(t, clients, o); !apierrors.IsNotFound(err) {
					t.Errorf("%s/%s: %v after a dry run, want NotFound", o.GetKind(), o.GetName(), err)
				}
			}
			if _, err := in.Inventory(t.Context()); !apierrors.IsNotFound(err) {
				t.Errorf("inventory after a dry run: %v, want NotFound", err)
			}
		})
	}
}

func get(t *testing.T, c chartapply.Clients, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	gvk := o.GroupVersionKind()
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("%s: %v", gvk, err)
	}
	if o.GetNamespace() != "" {
		return c.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace()).Get(t.Context(), o.GetName(), metav1.GetOptions{})
	}
	return c.Dynamic.Resource(m.Resource).Get(t.Context(), o.GetName(), metav1.GetOptions{})
}

// flotillactl runs the built flotillactl against the host.
func flotillactl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	stdout, stderr, err := flotillactlStreams(t, args...)
	return stdout + stderr, err
}

// flotillactlStreams runs flotillactl and returns its stdout and stderr.
func flotillactlStreams(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "flotillactl"),
		append(args, "--kubeconfig="+framework.Env.Host.Kubeconfig)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// init creates every object the chart makes in a namespace that exists
// already; a second init changes nothing (the generated certificates are
// kept); deinit removes all of it and keeps what init did not create,
// there and elsewhere.
func TestInitDeinit(t *testing.T) {
	ctx := t.Context()
	_, clients := hostClients(t)
	const ns, release = "flotilla-init", "flotilla"
	createNamespace(t, clients.Core, ns)
	t.Cleanup(func() { _, _ = flotillactl(t, "deinit", "--namespace="+ns) })

	// What init must not touch: an object in its namespace and a ClusterRole.
	keepCM, err := clients.Core.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep-me"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keepRole, err := clients.Core.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "keep-me-" + ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = clients.Core.RbacV1().ClusterRoles().Delete(context.Background(), keepRole.Name, metav1.DeleteOptions{})
	})

	stdout, stderr, err := flotillactlStreams(t, "init", "--wait=false", "--namespace="+ns)
	if err != nil {
		t.Fatalf("init: %v\n%s%s", err, stdout, stderr)
	}
	t.Logf("init:\n%s%s", stderr, stdout)
	// Progress on stderr, as karmadactl init logs it; the result on stdout.
	if !strings.Contains(stderr, "apiservice/v1alpha1.cluster.karmada.io created") || strings.Contains(stdout, " created") {
		t.Errorf("init does not report each object on stderr (and only there)")
	}
	for _, want := range []string{"objects applied; recorded in configmap", "flotillactl join"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("init's stdout lacks %q", want)
		}
	}

	// Every object the chart makes is there, and recorded with its uid.
	chrt, err := charts.Load(charts.FlotillaChart)
	if err != nil {
		t.Fatal(err)
	}
	r, err := charts.Render(chrt, charts.Release{Name: release, Namespace: ns}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := &chartapply.Installer{Clients: clients, Release: release, Namespace: ns, Out: &strings.Builder{}}
	inv, err := in.Inventory(ctx)
	if err != nil {
		t.Fatalf("inventory: %v", err)
	}
	if inv.CreatedNamespace {
		t.Error("inventory says init created a namespace that existed")
	}
	uids := map[string]string{}
	for _, ref := range inv.Objects {
		uids[ref.Kind+"/"+ref.Namespace+"/"+ref.Name] = string(ref.UID)
	}
	versions := map[string]string{}
	for _, o := range r.Objects {
		key := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
		got, err := get(t, clients, o)
		if err != nil {
			t.Errorf("%s after init: %v", key, err)
			continue
		}
		if uids[key] != string(got.GetUID()) {
			t.Errorf("%s: inventory uid %q, object's %q", key, uids[key], got.GetUID())
		}
		versions[key] = got.GetResourceVersion()
	}
	if len(inv.Objects) != len(r.Objects) {
		t.Errorf("inventory holds %d objects, the chart renders %d", len(inv.Objects), len(r.Objects))
	}
	secret, err := clients.Core.CoreV1().Secrets(ns).Get(ctx, "flotilla-apiserver-cert", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	apiSvc, err := clients.Aggregator.ApiregistrationV1().APIServices().Get(ctx, "v1alpha1.cluster.karmada.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(apiSvc.Spec.CABundle) != string(secret.Data["ca.crt"]) {
		t.Error("APIService caBundle is not the serving Secret's ca.crt")
	}

	// Again: the certificates are read back, so nothing changes.
	out, err := flotillactl(t, "init", "--wait=false", "--namespace="+ns)
	if err != nil {
		t.Fatalf("second init: %v\n%s", err, out)
	}
	for _, o := range r.Objects {
		key := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
		got, err := get(t, clients, o)
		if err != nil {
			t.Errorf("%s after the second init: %v", key, err)
		} else if got.GetResourceVersion() != versions[key] {
			t.Errorf("%s changed by a second init with the same values (resourceVersion %s -> %s)", key, versions[key], got.GetResourceVersion())
		}
	}
	if strings.Contains(out, " created") || strings.Contains(out, " configured") {
		t.Errorf("second init reports changes:\n%s", out)
	}

	out, err = flotillactl(t, "deinit", "--namespace="+ns)
	if err != nil {
		t.Fatalf("deinit: %v\n%s", err, out)
	}
	t.Logf("deinit:\n%s", out)
	for _, o := range r.Objects {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			_, err := get(t, clients, o)
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("%s/%s still there after deinit", o.GetKind(), o.GetName())
		}
	}
	if _, err := in.Inventory(ctx); !apierrors.IsNotFound(err) {
		t.Errorf("inventory after deinit: %v, want NotFound", err)
	}
	if cm, err := clients.Core.CoreV1().ConfigMaps(ns).Get(ctx, keepCM.Name, metav1.GetOptions{}); err != nil || cm.UID != keepCM.UID {
		t.Errorf("configmap %s/%s not created by init: %v after deinit", ns, keepCM.Name, err)
	}
	if _, err := clients.Core.RbacV1().ClusterRoles().Get(ctx, keepRole.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("clusterrole %s not created by init: %v after deinit", keepRole.Name, err)
	}
	if n, err := clients.Core.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil || n.DeletionTimestamp != nil {
		t.Errorf("namespace %s existed before init: %v, deleting %v after deinit", ns, err, n.DeletionTimestamp)
	}

	// With nothing recorded, deinit removes nothing and says why.
	if out, err := flotillactl(t, "deinit", "--namespace="+ns); err == nil || !strings.Contains(out, "nothing is removed") {
		t.Errorf("deinit without an inventory: %v\n%s", err, out)
	}
}

// init creates the namespace when missing and deinit deletes it; an object
// init made that someone replaced since (another uid) is kept.
func TestInitCreatesNamespaceDeinitDeletesIt(t *testing.T) {
	ctx := t.Context()
	_, clients := hostClients(t)
	const ns = "flotilla-fresh"
	t.Cleanup(func() {
		_, _ = flotillactl(t, "deinit", "--namespace="+ns)
		_ = clients.Core.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	if out, err := flotillactl(t, "init", "--wait=false", "--namespace="+ns, "--set", "etcd.mode=embedded", "--set", "apiserver.replicas=1"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	in := &chartapply.Installer{Clients: clients, Release: "flotilla", Namespace: ns, Out: &strings.Builder{}}
	inv, err := in.Inventory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !inv.CreatedNamespace {
		t.Error("inventory does not say init created the namespace")
	}
	if slices.ContainsFunc(inv.Objects, func(r chartapply.Ref) bool { return r.Kind == "StatefulSet" }) {
		t.Error("embedded etcd, yet a StatefulSet was applied")
	}
	// Someone replaces the ServiceAccount init made.
	sas := clients.Core.CoreV1().ServiceAccounts(ns)
	if err := sas.Delete(ctx, "flotilla-apiserver", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-apiserver"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := flotillactl(t, "deinit", "--namespace="+ns)
	if err != nil {
		t.Fatalf("deinit: %v\n%s", err, out)
	}
	if !strings.Contains(out, "ServiceAccount/"+ns+"/flotilla-apiserver kept") {
		t.Errorf("deinit does not say it kept the replaced ServiceAccount:\n%s", out)
	}
	n, err := clients.Core.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err == nil && n.DeletionTimestamp == nil {
		t.Errorf("namespace %s, created by init, is not being deleted after deinit", ns)
	}
}

// init --wait fails after --timeout when the APIServices do not become
// Available (nothing runs the pods here) and names each one with why.
func TestInitWaitNamesWhatIsNotAvailable(t *testing.T) {
	_, clients := hostClients(t)
	const ns = "flotilla-wait"
	createNamespace(t, clients.Core, ns)
	t.Cleanup(func() { _, _ = flotillactl(t, "deinit", "--namespace="+ns) })
	start := time.Now()
	out, err := flotillactl(t, "init", "--namespace="+ns, "--timeout=6s", "--set", "etcd.mode=embedded", "--set", "apiserver.replicas=1")
	if err == nil {
		t.Fatalf("init --wait succeeded with no pod running:\n%s", out)
	}
	if d := time.Since(start); d > 90*time.Second {
		t.Errorf("init took %s with --timeout=6s", d)
	}
	// Every APIService init applied is waited for and named as not Available.
	apiServices := strings.Count(out, "\napiservice/")
	if apiServices == 0 {
		t.Fatalf("init applied no APIService:\n%s", out)
	}
	for _, want := range []string{fmt.Sprintf("waiting for the APIServices: 0/%d Available", apiServices), fmt.Sprintf("%d APIServices are not Available", apiServices), "v1alpha1.cluster.karmada.io (", "v1alpha1.flotilla.io (", "v1beta1.metrics.k8s.io ("} {
		if !strings.Contains(out, want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
}
