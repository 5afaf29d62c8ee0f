package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// getBed is what the get and describe tests read, in namespace ns:
// Deployment web and ConfigMap web-config (label app=cli-get) propagated
// by a PropagationPolicy to member1 and member2, and ConfigMap local made
// directly in member1 (the control plane does not manage it).
type getBed struct{ ns string }

func newGetBed(t *testing.T, ns string) getBed {
	t.Helper()
	framework.Namespace(t, ns)
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s, labels: {app: cli-get}}
spec:
  replicas: 1
  selector: {matchLabels: {app: cli-get}}
  template:
    metadata: {labels: {app: cli-get}}
    spec: {containers: [{name: nginx, image: nginx:1.27}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: %[1]s, labels: {app: cli-get}}
data: {k: v}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  - {apiVersion: v1, kind: ConfigMap, name: web-config}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
`, ns))
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		for _, m := range []string{"member1", "member2"} {
			c := framework.MemberClient(t, m)
			if _, err := c.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
				return fmt.Sprintf("Deployment %s/web in %s: %v", ns, m, err)
			}
			if _, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{}); err != nil {
				return fmt.Sprintf("ConfigMap %s/web-config in %s: %v", ns, m, err)
			}
		}
		local := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "local", Namespace: ns}}
		_, err := framework.MemberClient(t, "member1").CoreV1().ConfigMaps(ns).Create(ctx, local, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Sprintf("ConfigMap %s/local in member1: %v", ns, err)
		}
		return ""
	})
	return getBed{ns: ns}
}

// getRun runs the built flotillactl with kubeconfig (the admin's when
// empty) and returns its standard output and error apart.
func getRun(t *testing.T, kubeconfig string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var env []string
	if kubeconfig != "" {
		env = []string{"KUBECONFIG=" + kubeconfig} // the last KUBECONFIG wins
	}
	r := runMemberCtl(t, "", env, args...)
	return r.stdout, r.stderr, r.err
}

// getMustRun is getRun that fails the test unless the command succeeds.
func getMustRun(t *testing.T, kubeconfig string, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := getRun(t, kubeconfig, args...)
	if err != nil {
		t.Fatalf("flotillactl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout, stderr
}

// getTable parses a kubectl table into rows keyed by header; it fails the
// test if a row does not have a cell per header.
func getTable(t *testing.T, out string) []map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return nil
	}
	header := strings.Fields(lines[0])
	var rows []map[string]string
	for _, l := range lines[1:] {
		cells := strings.Fields(l)
		if len(cells) != len(header) {
			t.Fatalf("row %q does not match the header %q:\n%s", l, lines[0], out)
		}
		row := map[string]string{}
		for i, h := range header {
			row[h] = cells[i]
		}
		rows = append(rows, row)
	}
	return rows
}

// getCells lists column values of the rows, each "NAME@CLUSTER=ADOPTION"
// when those columns exist, sorted.
func getCells(rows []map[string]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r["NAME"]+"@"+r["CLUSTER"]+"="+r["ADOPTION"])
	}
	slices.Sort(out)
	return out
}

func getWant(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: rows %v, want %v", what, got, want)
	}
}

// TestGetAcrossClusters: flotillactl get reads the control plane and the
// members through clusters/{name}/proxy and prints one table with
// karmadactl's CLUSTER and ADOPTION columns; -C, -l, -A and -o filter and
// format as kubectl and karmadactl do.
func TestGetAcrossClusters(t *testing.T) {
	bed := newGetBed(t, "cli-get")
	ns := bed.ns

	t.Run("operation scope all", func(t *testing.T) {
		out, errOut := getMustRun(t, "", "get", "deployments", "-n", ns, "--operation-scope=all")
		t.Logf("get deployments --operation-scope=all:\n%s", out)
		rows := getTable(t, out)
		getWant(t, "get deployments --operation-scope=all", getCells(rows), "web@Karmada=-", "web@member1=Y", "web@member2=Y")
		if !strings.HasPrefix(out, "NAME ") || !regexp.MustCompile(`^NAME +CLUSTER +READY +UP-TO-DATE +AVAILABLE +AGE +ADOPTION\n`).MatchString(out) {
			t.Errorf("header is not karmadactl's NAME CLUSTER <kubectl's columns> ADOPTION:\n%s", out)
		}
		if errOut != "" {
			t.Errorf("stderr: %s", errOut)
		}
	})
	t.Run("default scope is the control plane", func(t *testing.T) {
		out, _ := getMustRun(t, "", "get", "deployments", "-n", ns)
		getWant(t, "get deployments", getCells(getTable(t, out)), "web@Karmada=-")
	})
	t.Run("karmada.io objects of the control plane", func(t *testing.T) {
		out, _ := getMustRun(t, "", "get", "clusters")
		getWant(t, "get clusters", getCells(getTable(t, out)), "member1@Karmada=-", "member2@Karmada=-", "member3@Karmada=-")
		out, _ = getMustRun(t, "", "get", "propagationpolicies", "-n", ns)
		getWant(t, "get propagationpolicies", getCells(getTable(t, out)), "web@Karmada=-")
	})
	t.Run("two kinds", func(t *testing.T) {
		out, _ := getMustRun(t, "", "get", "deployments,configmaps", "-n", ns, "-C", "member2")
		tables := strings.Split(strings.TrimSpace(out), "\n\n")
		if len(tables) != 2 {
			t.Fatalf("get deployments,configmaps: %d tables, want one per kind:\n%s", len(tables), out)
		}
		getWant(t, "deployments", getCells(getTable(t, tables[0])), "deployment.apps/web@member2=Y")
		var cms []string
		for _, c := range getCells(getTable(t, tables[1])) {
			if !strings.HasPrefix(c, "configmap/kube-root-ca.crt@") {
				cms = append(cms, c)
			}
		}
		getWant(t, "configmaps", cms, "configmap/web-config@member2=Y")
	})
	t.Run("members and adoption", func(t *testing.T) {
		out, _ := getMustRun(t, "", "get", "configmaps", "-n", ns, "--operation-scope=members")
		var got []string
		for _, c := range getCells(getTable(t, out)) {
			if !strings.HasPrefix(c, "kube-root-ca.crt@") {
				got = append(got, c)
			}
		}
		getWant(t, "get configmaps --operation-scope=members", got, "web-config@member1=Y", "web-config@member2=Y", "local@member1=N")
	})
	t.Run("-C filters", func(t *testing.T) {
		out, _ := getMustRun(t, "", "get", "deployments", "-n", ns, "-C", "member1")
		getWant(t, "get deployments -C member1", getCells(getTable(t, out)), "web@member1=Y")
		out, _ = getMustRun(t, "", "get", "deployments", "-n", ns, "--operation-scope=all", "--clusters=member2,member3")
		getWant(t, "get deployments --operation-scope=all -C member2,member3", getCells(getTable(t, out)), "web@Karmada=-", "web@member2=Y")
	})
	t.Run("-l", func(t *testing.T) {
		out, _ := getMustRun(t, "", "get", "configmaps", "-n", ns, "--operation-scope=all", "-l", "app=cli-get")
		getWant(t, "get configmaps -l app=cli-get", getCells(getTable(t, out)), "web-config@Karmada=-", "web-config@member1=Y", "web-config@member2=Y")
		out, _ = getMustRun(t, "", "get", "configmaps", "-n", ns, "-C", "member1", "--labels", "app!=cli-get")
		if rows := getCells(getTable(t, out)); slices.Contains(rows, "web-config@member1=Y") || !slices.Contains(rows, "local@member1=N") {
			t.Errorf("get configmaps --labels app!=cli-get: %v", rows)
		}
	})
	t.Run("-A", func(t *testing.T) {
		out, _ := getMustRun(t, "", "get", "deployments", "-A", "-C", "member1,member2")
		found := 0
		for _, r := range getTable(t, out) {
			if r["NAMESPACE"] == ns && r["NAME"] == "web" {
				found++
			}
		}
		if found != 2 {
			t.Errorf("get deployments -A -C member1,member2: %d rows of %s/web, want 2 (with a NAMESPACE column):\n%s", found, ns, out)
		}
	})
	t.Run("-o json", func(t *testing.T) {
		out, _ := getMustRun(t, "", "get", "deployment", "web", "-n", ns, "--operation-scope=all", "-o", "json")
		var list unstructured.UnstructuredList
		if err := list.UnmarshalJSON([]byte(out)); err != nil {
			t.Fatalf("-o json is not one list: %v\n%s", err, out)
		}
		var got []string
		for _, it := range list.Items {
			got = append(got, it.GetName()+"@"+it.GetAnnotations()["resource.karmada.io/cached-from-cluster"]+"="+it.GetLabels()["karmada.io/managed"])
		}
		getWant(t, "get deployment web -o json", slices.Sorted(slices.Values(got)), "web@=", "web@member1=true", "web@member2=true")
	})
	t.Run("-o yaml of one object", func(t *testing.T) {
		out, _ := getMustRun(t, "", "get", "deployment", "web", "-n", ns, "-C", "member2", "-o", "yaml")
		var d struct {
			Kind     string
			Metadata metav1.ObjectMeta
		}
		if err := yaml.Unmarshal([]byte(out), &d); err != nil || d.Kind != "Deployment" || d.Metadata.Name != "web" ||
			d.Metadata.Annotations["resource.karmada.io/cached-from-cluster"] != "member2" {
			t.Errorf("-o yaml: kind %q name %q annotations %v (%v), want member2's Deployment web:\n%s", d.Kind, d.Metadata.Name, d.Metadata.Annotations, err, out)
		}
	})
	t.Run("-o name", func(t *testing.T) {
		out, _ := getMustRun(t, "", "get", "deployments", "-n", ns, "--operation-scope=members", "-o", "name")
		if out != "deployment.apps/web\ndeployment.apps/web\n" {
			t.Errorf("-o name: %q, want member1's and member2's deployment.apps/web", out)
		}
	})
	t.Run("missing in a member", func(t *testing.T) {
		out, errOut := getMustRun(t, "", "get", "deployment", "web", "-n", ns, "--operation-scope=members")
		getWant(t, "get deployment web --operation-scope=members", getCells(getTable(t, out)), "web@member1=Y", "web@member2=Y")
		if !strings.Contains(errOut, "warning: cluster member3 skipped: NotFound") {
			t.Errorf("stderr %q, want a NotFound warning naming member3", errOut)
		}
		_, errOut, err := getRun(t, "", "get", "deployment", "web", "-n", ns, "-C", "member3")
		if err == nil || !strings.Contains(errOut, `deployments.apps "web" not found`) {
			t.Errorf("only member3: %v %q, want a failure saying web is not found", err, errOut)
		}
	})
	t.Run("watch", func(t *testing.T) { testGetWatch(t, ns) })
}

// testGetWatch: get --watch lists the Deployment in member1 and member2,
// then prints a row when member1's changes.
func testGetWatch(t *testing.T, ns string) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "flotillactl"), "get", "deployments", "-n", ns,
		"-C", "member1,member2", "--watch", "--kubeconfig="+framework.Env.Host.Kubeconfig, "--cache-dir="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
	}()
	member1Rows := 0
	changed := false
	for member1Rows < 2 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the watch ended after %d rows of member1; stderr: %s", member1Rows, errOut.String())
			}
			if f := strings.Fields(l); len(f) > 1 && f[0] == "web" && f[1] == "member1" {
				member1Rows++
			}
		case <-ctx.Done():
			t.Fatalf("%d rows of member1 within a minute, want the listed one and one for the change; stderr: %s", member1Rows, errOut.String())
		}
		if member1Rows == 1 && !changed {
			// A change to member1's object: its row again.
			patch := []byte(`{"metadata":{"annotations":{"cli-get/watched":"` + time.Now().Format(time.RFC3339Nano) + `"}}}`)
			if _, err := framework.MemberClient(t, "member1").AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			changed = true
		}
	}
}

// TestGetUnknownCluster: a -C name the control plane does not know is an
// error naming it, before anything is read.
func TestGetUnknownCluster(t *testing.T) {
	out, errOut, err := getRun(t, "", "get", "deployments", "-C", "member1,member9")
	if err == nil || !strings.Contains(errOut, `cluster "member9" not found in the control plane`) || out != "" {
		t.Errorf("get -C member1,member9: %v\nstdout %q\nstderr %q\nwant an error naming member9 and no output", err, out, errOut)
	}
	_, errOut, err = getRun(t, "", "describe", "deployments", "-C", "member9")
	if err == nil || !strings.Contains(errOut, `cluster "member9" not found`) {
		t.Errorf("describe -C member9: %v %q, want an error naming member9", err, errOut)
	}
}

// TestGetAsMemberOneUser: a user whom the control plane lets through
// clusters/member1/proxy only, and whom member1 lets read Deployments in
// the namespace, gets member1's rows and a warning naming member2 and
// member3 as forbidden; with only forbidden members the command fails.
func TestGetAsMemberOneUser(t *testing.T) {
	bed := newGetBed(t, "cli-get-user")
	ns := bed.ns
	const user = "cli-get-member1-only"
	cfg := framework.ProxyServiceAccountConfig(t, user, "member1")
	t.Cleanup(func() {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		host := framework.HostClient(t)
		_ = host.RbacV1().ClusterRoleBindings().Delete(ctx, user+"-proxy-member1", metav1.DeleteOptions{})
		_ = host.RbacV1().ClusterRoleBindings().Delete(ctx, user+"-list-clusters", metav1.DeleteOptions{})
		_ = host.RbacV1().ClusterRoles().Delete(ctx, user+"-list-clusters", metav1.DeleteOptions{})
		_ = host.CoreV1().ServiceAccounts("default").Delete(ctx, user, metav1.DeleteOptions{})
	})
	m1 := framework.MemberClient(t, "member1")
	ctx := t.Context()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "deployment-reader", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := m1.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: user}}}
	if _, err := m1.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := getKubeconfig(t, cfg)

	// The user may not list clusters: -C names them. Unified auth lets
	// the proxy act as the user after a moment.
	var out, errOut string
	framework.Eventually(t, time.Minute, func(context.Context) string {
		var err error
		out, errOut, err = getRun(t, kubeconfig, "get", "deployments", "-n", ns, "-C", "member1,member2,member3")
		if err != nil || !slices.Equal(getCells(getTable(t, out)), []string{"web@member1=Y"}) {
			return fmt.Sprintf("get as %s: %v\nstdout:\n%s\nstderr:\n%s", user, err, out, errOut)
		}
		return ""
	})
	for _, m := range []string{"member2", "member3"} {
		if !regexp.MustCompile(`warning: cluster ` + m + ` skipped: Forbidden: .*"` + m + `".*clusters/proxy`).MatchString(errOut) {
			t.Errorf("stderr does not name %s as forbidden:\n%s", m, errOut)
		}
	}
	if strings.Contains(errOut, "cluster member1") {
		t.Errorf("stderr names member1, which was read:\n%s", errOut)
	}

	// Only forbidden members: nothing read, the command fails.
	_, errOut, err := getRun(t, kubeconfig, "get", "deployments", "-n", ns, "-C", "member2")
	if err == nil || !strings.Contains(errOut, "forbidden") || !strings.Contains(errOut, "member2") {
		t.Errorf("get -C member2 as %s: %v %q, want a failure saying member2 is forbidden", user, err, errOut)
	}

	// Without -C the user must be able to list the clusters.
	_, errOut, err = getRun(t, kubeconfig, "get", "deployments", "-n", ns, "--operation-scope=members")
	if err == nil || !strings.Contains(errOut, "listing the member clusters") {
		t.Errorf("get --operation-scope=members as %s without list rights: %v %q, want a failure saying the clusters could not be listed", user, err, errOut)
	}
	host := framework.HostClient(t)
	lister := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user + "-list-clusters"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters"}, Verbs: []string{"get", "list"}}}}
	if _, err := host.RbacV1().ClusterRoles().Create(ctx, lister, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := host.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: lister.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: lister.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, func(context.Context) string {
		out, errOut, err := getRun(t, kubeconfig, "get", "deployments", "-n", ns, "--operation-scope=members")
		if err != nil || !slices.Equal(getCells(getTable(t, out)), []string{"web@member1=Y"}) ||
			!strings.Contains(errOut, "warning: cluster member2 skipped: Forbidden") || !strings.Contains(errOut, "warning: cluster member3 skipped: Forbidden") {
			return fmt.Sprintf("get --operation-scope=members as %s: %v\nstdout:\n%s\nstderr:\n%s", user, err, out, errOut)
		}
		return ""
	})
}

// getKubeconfig writes a kubeconfig of cfg's server and bearer token.
func getKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: flotilla, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: user, user: {token: %q}}]
contexts: [{name: user, context: {cluster: flotilla, user: user}}]
current-context: user
`, cfg.Host, base64.StdEncoding.EncodeToString(cfg.CAData), cfg.BearerToken)
	path := filepath.Join(t.TempDir(), "user.kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGetMemberDown: with member2's API server stopped, get prints the
// control plane's and member1's rows and a warning naming member2, within
// --member-timeout; with member2 alone it fails.
func TestGetMemberDown(t *testing.T) {
	bed := newGetBed(t, "cli-get-down")
	ns := bed.ns
	framework.StopMember(t, "member2")

	start := time.Now()
	out, errOut := getMustRun(t, "", "get", "deployments", "-n", ns, "--operation-scope=all", "--member-timeout=5s")
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Errorf("get took %s with member2 down, want about --member-timeout=5s at most", elapsed)
	}
	getWant(t, "get deployments --operation-scope=all, member2 down", getCells(getTable(t, out)), "web@Karmada=-", "web@member1=Y")
	if !strings.Contains(errOut, "warning: cluster member2 skipped: ") || strings.Contains(errOut, "cluster member1") {
		t.Errorf("stderr %q, want a warning naming member2 alone", errOut)
	}
	t.Logf("member2 down: %s", errOut)

	_, errOut, err := getRun(t, "", "get", "deployments", "-n", ns, "-C", "member2", "--member-timeout=5s")
	if err == nil {
		t.Errorf("get -C member2 with member2 down succeeded; stderr %q", errOut)
	}
}
