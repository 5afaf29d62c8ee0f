package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// This file covers the commands (describe apart) that run one kubectl
// command in the control plane or, through clusters/{name}/proxy as the
// caller, in the member -C names; top; and version, completion, options
// and -v. Members' pods are kwok's: logs and attach serve the member's
// PodLogFile, exec runs the command in kwok's process, and metrics-server
// scrapes kwok's emulated usage.

// ctlRun is one run of the built flotillactl.
type ctlRun struct {
	stdout, stderr string
	err            error
}

func (r ctlRun) String() string {
	return fmt.Sprintf("exit %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
}

// failed says whether the run failed with stderr containing each of want.
func (r ctlRun) failed(want ...string) bool {
	if r.err == nil {
		return false
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			return false
		}
	}
	return true
}

// runMemberCtl runs flotillactl as the control plane's admin, with stdin
// and extra environment variables.
func runMemberCtl(t *testing.T, stdin string, environ []string, args ...string) ctlRun {
	t.Helper()
	ctx, cancel := framework.CommandContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "flotillactl"), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	cmd.Env = append(ctlEnv(t), environ...)
	err := cmd.Run()
	return ctlRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// ctlEnv locates the control plane by the environment, as a user's
// shell does, so that no flag lands after a command's "--".
func ctlEnv(t *testing.T) []string {
	return append(os.Environ(), "KUBECONFIG="+framework.Env.Host.Kubeconfig, "KUBECACHEDIR="+t.TempDir())
}

// ctl runs flotillactl without stdin.
func ctl(t *testing.T, args ...string) ctlRun {
	t.Helper()
	return runMemberCtl(t, "", nil, args...)
}

// mustCtl runs flotillactl and fails t unless it succeeds.
func mustCtl(t *testing.T, args ...string) string {
	t.Helper()
	r := ctl(t, args...)
	if r.err != nil {
		t.Fatalf("flotillactl %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// streamMemberCtl starts flotillactl for at most 30 s and returns its
// standard output line by line, and stop, which kills it; its standard
// error is logged when t fails.
func streamMemberCtl(t *testing.T, args ...string) (*bufio.Scanner, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	cmd := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "flotillactl"), args...)
	cmd.Env = ctlEnv(t)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("flotillactl %s: stderr:\n%s", strings.Join(args, " "), stderr.String())
		}
	})
	return framework.StreamCommand(t, cmd, cancel)
}

// lockedBuffer is a bytes.Buffer a process writes while a test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitMemberProxy waits until the admin reaches the member through the
// control plane's proxy (unified auth grants it after the join).
func waitMemberProxy(t *testing.T, cluster string) {
	t.Helper()
	framework.Eventually(t, time.Minute, func(context.Context) string {
		if r := ctl(t, "api-versions", "-C", cluster); r.err != nil {
			return r.String()
		}
		return ""
	})
}

// memberNamespace creates a namespace of its own in each member, directly
// (no control plane object), deleted after the test.
func memberNamespace(t *testing.T, members ...string) string {
	t.Helper()
	ns := "cli-" + utilrand.String(6)
	for _, m := range members {
		cs := framework.MemberClient(t, m)
		if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := framework.CommandContext(t)
			defer cancel()
			_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		})
	}
	for _, m := range members {
		framework.WaitPodsAdmitted(t, m, ns)
	}
	return ns
}

// memberPod creates a pod with one container "app" in a member directly
// and waits until kwok runs it.
func memberPod(t *testing.T, member, ns, name string, annotations map[string]string) {
	t.Helper()
	cs := framework.MemberClient(t, member)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Sprintf("pod %s/%s in %s is %s", ns, name, member, p.Status.Phase)
		}
		return ""
	})
}

// appendPodLog appends a line to every pod's log in member (kwok's
// PodLogFile) and returns the line's marker.
func appendPodLog(t *testing.T, member *env.Cluster, what string) string {
	t.Helper()
	marker := fmt.Sprintf("%s-%s-%d", what, member.Name, time.Now().UnixNano())
	f, err := os.OpenFile(member.PodLogFile(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprint(f, env.CRILogLine(marker))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return marker
}

// scanFor reads lines until one contains want, or the stream ends.
func scanFor(lines *bufio.Scanner, want string) bool {
	for lines.Scan() {
		if strings.Contains(lines.Text(), want) {
			return true
		}
	}
	return false
}

// TestMemberLogs: logs of a pod that only member2 has, with -C member2;
// the same name in member1 is a NotFound naming member1.
func TestMemberLogs(t *testing.T) {
	waitMemberProxy(t, "member2")
	ns := memberNamespace(t, "member1", "member2")
	pod := "logs-" + utilrand.String(5)
	memberPod(t, "member2", ns, pod, nil)
	member2 := framework.Member(t, "member2")

	t.Run("snapshot", func(t *testing.T) {
		marker := appendPodLog(t, member2, "snapshot")
		out := mustCtl(t, "logs", pod, "-n", ns, "-C", "member2")
		if !strings.Contains(out, "kwok pod log") || !strings.Contains(out, marker) {
			t.Fatalf("logs of member2's pod: %q, want member2's pod log with %s", out, marker)
		}
	})
	t.Run("-c and --tail", func(t *testing.T) {
		appendPodLog(t, member2, "tail")
		out := mustCtl(t, "logs", pod, "-n", ns, "-c", "app", "--tail=1", "--cluster=member2")
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "tail-member2-") {
			t.Fatalf("--tail=1: %q, want the last line only", out)
		}
		r := ctl(t, "logs", pod, "-n", ns, "-c", "nope", "-C", "member2")
		if !r.failed("cluster(member2)", "nope") {
			t.Fatalf("logs -c nope: %s\nwant kubectl's error about the container, naming member2", r)
		}
	})
	t.Run("-f", func(t *testing.T) {
		lines, stop := streamMemberCtl(t, "logs", "-f", pod, "-n", ns, "-C", "member2")
		defer stop()
		if !scanFor(lines, "kwok pod log") {
			t.Fatal("logs -f printed nothing of the pod log")
		}
		marker := appendPodLog(t, member2, "followed")
		if !scanFor(lines, marker) {
			t.Fatalf("the appended line never streamed through logs -f: %v", lines.Err())
		}
	})
	t.Run("--previous", func(t *testing.T) {
		// The pod never restarted and kwok keeps no previous log: the
		// request with previous=true reaches member2's kubelet, whose error
		// kubectl prints, named after the member.
		r := ctl(t, "logs", "--previous", pod, "-n", ns, "-C", "member2")
		if !r.failed("cluster(member2)") || strings.Contains(r.stdout, "kwok pod log") {
			t.Fatalf("logs --previous: %s\nwant an error from member2, not the current log", r)
		}
	})
	t.Run("a pod member1 does not have", func(t *testing.T) {
		r := ctl(t, "logs", pod, "-n", ns, "-C", "member1")
		if !r.failed("NotFound", "cluster(member1)", fmt.Sprintf("pods %q not found", pod)) {
			t.Fatalf("logs -C member1: %s\nwant a NotFound naming member1", r)
		}
	})
}

// TestMemberLogsAsProxyUser: a user the control plane lets reach
// member1's proxy only, and whom member1 lets read pod logs in one
// namespace, gets member1's logs and a Forbidden for member2.
func TestMemberLogsAsProxyUser(t *testing.T) {
	waitMemberProxy(t, "member1")
	ns := memberNamespace(t, "member1", "member2")
	pod := "logs-" + utilrand.String(5)
	memberPod(t, "member1", ns, pod, nil)
	memberPod(t, "member2", ns, pod, nil)
	user := "cli-" + utilrand.String(5)
	cfg := framework.ProxyServiceAccountConfig(t, user, "member1")
	host := framework.HostClient(t)
	t.Cleanup(func() {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		_ = host.RbacV1().ClusterRoleBindings().Delete(ctx, user+"-proxy-member1", metav1.DeleteOptions{})
		_ = host.CoreV1().ServiceAccounts("default").Delete(ctx, user, metav1.DeleteOptions{})
	})
	m1 := framework.MemberClient(t, "member1")
	if _, err := m1.RbacV1().Roles(ns).Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "log-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods", "pods/log"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m1.RbacV1().RoleBindings(ns).Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "log-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "log-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "user.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: flotilla, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: %[3]s, user: {token: %[4]q}}]
contexts: [{name: flotilla, context: {cluster: flotilla, user: %[3]s}}]
current-context: flotilla
`, cfg.Host, base64.StdEncoding.EncodeToString(cfg.CAData), user, cfg.BearerToken)), 0o600); err != nil {
		t.Fatal(err)
	}
	asUser := func(args ...string) ctlRun {
		return runMemberCtl(t, "", []string{"KUBECONFIG=" + kubeconfig}, args...)
	}
	framework.Eventually(t, time.Minute, func(context.Context) string {
		if r := asUser("logs", pod, "-n", ns, "-C", "member1"); r.err != nil || !strings.Contains(r.stdout, "kwok pod log") {
			return "logs as the user: " + r.String()
		}
		return ""
	})
	r := asUser("logs", pod, "-n", ns, "-C", "member2")
	if !r.failed("cluster(member2)", "is forbidden", "clusters/proxy") || strings.Contains(r.stdout, "kwok pod log") {
		t.Fatalf("logs -C member2 as a user without member2's proxy: %s\nwant the control plane's Forbidden naming member2", r)
	}
}

// TestMemberExec: exec in a pod of member2 (kwok runs the command in its
// own process).
func TestMemberExec(t *testing.T) {
	waitMemberProxy(t, "member2")
	ns := memberNamespace(t, "member1", "member2")
	pod := "exec-" + utilrand.String(5)
	memberPod(t, "member2", ns, pod, nil)

	word := "hello-" + utilrand.String(5)
	if out := mustCtl(t, "exec", pod, "-n", ns, "-C", "member2", "--", "echo", word); strings.TrimSpace(out) != word {
		t.Fatalf("exec echo: %q, want %q", out, word)
	}
	if out := mustCtl(t, "exec", pod, "-n", ns, "-c", "app", "--cluster=member2", "--", "echo", word); strings.TrimSpace(out) != word {
		t.Fatalf("exec -c app echo: %q, want %q", out, word)
	}
	// -it with a pipe for stdin: kubectl falls back from the TTY (and says
	// so) and passes stdin through. The command ends after a line: the end
	// of stdin does not reach kwok's local exec.
	r := runMemberCtl(t, word+"\n", nil, "exec", "-it", pod, "-n", ns, "-C", "member2", "--", "head", "-n", "1")
	if r.err != nil || strings.TrimSpace(r.stdout) != word || !strings.Contains(r.stderr, "Unable to use a TTY") {
		t.Fatalf("exec -it head -n 1: %s\nwant stdin echoed and kubectl's TTY notice", r)
	}
	r = ctl(t, "exec", pod, "-n", ns, "-C", "member1", "--", "echo", word)
	if !r.failed("NotFound", "cluster(member1)", fmt.Sprintf("pods %q not found", pod)) {
		t.Fatalf("exec -C member1: %s\nwant a NotFound naming member1", r)
	}
}

// TestMemberAttach: attach to a pod of member2 follows what its container
// writes (kwok: what is appended to the pod log).
func TestMemberAttach(t *testing.T) {
	waitMemberProxy(t, "member2")
	ns := memberNamespace(t, "member1", "member2")
	pod := "attach-" + utilrand.String(5)
	memberPod(t, "member2", ns, pod, nil)
	member2 := framework.Member(t, "member2")

	lines, stop := streamMemberCtl(t, "attach", pod, "-n", ns, "--operation-scope=members", "--cluster=member2")
	defer stop()
	// attach prints what is written once it is attached: append lines
	// until one arrives.
	got := make(chan bool, 1)
	go func() { got <- scanFor(lines, "attach-member2-") }()
	deadline := time.After(20 * time.Second)
	for attached := false; !attached; {
		appendPodLog(t, member2, "attach")
		select {
		case ok := <-got:
			if !ok {
				t.Fatalf("attach ended without streaming the appended lines: %v", lines.Err())
			}
			attached = true
		case <-time.After(time.Second):
		case <-deadline:
			t.Fatal("no appended line streamed through attach within 20 s")
		}
	}

	r := ctl(t, "attach", pod, "-n", ns, "-C", "member1")
	if !r.failed("NotFound", "cluster(member1)", fmt.Sprintf("pods %q not found", pod)) {
		t.Fatalf("attach -C member1: %s\nwant a NotFound naming member1", r)
	}
}

// TestMemberTop: top pod and top node read each member's metrics-server
// through the proxy; kwok emulates the CPU use the pod annotation says.
func TestMemberTop(t *testing.T) {
	waitMemberProxy(t, "member1")
	waitMemberProxy(t, "member2")
	ns := memberNamespace(t, "member1", "member2")
	memberPod(t, "member2", ns, "busy", map[string]string{"kwok.x-k8s.io/usage-cpu": "300m"})
	memberPod(t, "member1", ns, "idle", nil)

	// A pod's metrics appear after metrics-server's third scrape of it.
	busy := regexp.MustCompile(`(?m)^busy\s+member2\s+(\d+)m\s+\d+Mi\s*$`)
	idle := regexp.MustCompile(`(?m)^idle\s+member1\s+\d+m\s+\d+Mi\s*$`)
	framework.Eventually(t, 3*time.Minute, func(context.Context) string {
		r := ctl(t, "top", "pod", "-n", ns)
		m := busy.FindStringSubmatch(r.stdout)
		if r.err != nil || m == nil || !idle.MatchString(r.stdout) || !strings.HasPrefix(r.stdout, "NAME") {
			return "top pod: " + r.String()
		}
		if cpu, _ := strconv.Atoi(m[1]); cpu < 200 || cpu > 400 {
			return fmt.Sprintf("busy uses %dm, want about the 300m kwok emulates: %s", cpu, r)
		}
		return ""
	})

	t.Run("-C", func(t *testing.T) {
		out := mustCtl(t, "top", "pods", "-n", ns, "-C", "member2", "--no-headers")
		if !busy.MatchString(out) || strings.Contains(out, "member1") {
			t.Fatalf("top pods -C member2: %q, want member2's pod only", out)
		}
	})
	t.Run("a pod the member does not have", func(t *testing.T) {
		r := ctl(t, "top", "pod", "busy", "-n", ns, "-C", "member1")
		if !r.failed(`cluster(member1): pods "busy" not found`) {
			t.Fatalf("top pod busy -C member1: %s\nwant a NotFound naming member1", r)
		}
		r = ctl(t, "top", "pod", "ghost", "-n", ns)
		if !r.failed(`cluster(member1): pods "ghost" not found`, `cluster(member2): pods "ghost" not found`, `cluster(member3): pods "ghost" not found`) {
			t.Fatalf("top pod ghost: %s\nwant a NotFound naming every member", r)
		}
		out := mustCtl(t, "top", "pod", "busy", "-n", ns)
		if !busy.MatchString(out) {
			t.Fatalf("top pod busy (every member): %q, want member2's row", out)
		}
	})
	t.Run("nodes", func(t *testing.T) {
		nodes, err := framework.MemberClient(t, "member2").CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
		if err != nil || len(nodes.Items) == 0 {
			t.Fatalf("member2's nodes: %v %v", nodes, err)
		}
		framework.Eventually(t, 2*time.Minute, func(context.Context) string {
			r := ctl(t, "top", "node", "--clusters=member2")
			for _, n := range nodes.Items {
				row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(n.Name) + `\s+member2\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%\s*$`)
				if r.err != nil || !row.MatchString(r.stdout) {
					return fmt.Sprintf("no usage row for member2's node %s: %s", n.Name, r)
				}
			}
			if strings.Contains(r.stdout, "member1") {
				return "member1 in top node --clusters=member2: " + r.String()
			}
			return ""
		})
	})
}

// TestMemberDiscovery: api-resources, api-versions and explain of a
// member show the member's APIs (a CRD only member1 has), of the control
// plane the control plane's.
func TestMemberDiscovery(t *testing.T) {
	waitMemberProxy(t, "member1")
	waitMemberProxy(t, "member2")
	group := "e2e-" + utilrand.String(5) + ".flotilla.io"
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A gadget only member1 knows.
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, description: How big the gadget is.}
`, group)
	file := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(file, []byte(crd), 0o600); err != nil {
		t.Fatal(err)
	}
	member1 := framework.Member(t, "member1")
	if out, err := framework.KubectlAt(t, member1.Kubeconfig, "apply", "-f", file); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = framework.KubectlAt(t, member1.Kubeconfig, "delete", "-f", file) })

	t.Run("api-resources", func(t *testing.T) {
		framework.Eventually(t, time.Minute, func(context.Context) string {
			if r := ctl(t, "api-resources", "-C", "member1", "--api-group="+group); r.err != nil || !strings.Contains(r.stdout, "gadgets") {
				return "api-resources -C member1: " + r.String()
			}
			return ""
		})
		out := mustCtl(t, "api-resources", "--operation-scope=members", "--cluster=member1")
		if !strings.Contains(out, "deployments") || strings.Contains(out, "propagationpolicies") {
			t.Fatalf("api-resources of member1: want a member's kinds, not the control plane's:\n%s", out)
		}
		if out := mustCtl(t, "api-resources", "-C", "member2", "--api-group="+group, "--no-headers"); strings.TrimSpace(out) != "" {
			t.Fatalf("api-resources -C member2 lists member1's CRD: %q", out)
		}
		if out := mustCtl(t, "api-resources", "--api-group=policy.karmada.io"); !strings.Contains(out, "propagationpolicies") {
			t.Fatalf("api-resources of the control plane: %q, want propagationpolicies", out)
		}
	})
	t.Run("api-versions", func(t *testing.T) {
		if out := mustCtl(t, "api-versions", "-C", "member1"); !strings.Contains(out, group+"/v1") || strings.Contains(out, "policy.karmada.io") {
			t.Fatalf("api-versions -C member1: %q", out)
		}
	})
	t.Run("explain", func(t *testing.T) {
		framework.Eventually(t, time.Minute, func(context.Context) string {
			r := ctl(t, "explain", "gadgets.spec.size", "-C", "member1")
			if r.err != nil || !strings.Contains(r.stdout, "How big the gadget is.") {
				return "explain -C member1: " + r.String()
			}
			return ""
		})
		r := ctl(t, "explain", "gadgets", "-C", "member2")
		if !r.failed("cluster(member2)", "gadgets") {
			t.Fatalf("explain gadgets -C member2: %s\nwant an error naming member2", r)
		}
		if out := mustCtl(t, "explain", "propagationpolicies.spec.placement"); !strings.Contains(out, "clusterAffinity") {
			t.Fatalf("explain of the control plane: %q", out)
		}
	})
}

// TestMemberObjectCommands: label, annotate, patch, edit, create and
// delete with -C change member1's objects through the proxy and nothing
// in the control plane.
func TestMemberObjectCommands(t *testing.T) {
	waitMemberProxy(t, "member1")
	ns := memberNamespace(t, "member1")
	name := "cm-" + utilrand.String(5)
	member := framework.MemberClient(t, "member1")
	if _, err := member.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
		Data: map[string]string{"mode": "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	get := func() *corev1.ConfigMap {
		t.Helper()
		cm, err := member.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}

	if out := mustCtl(t, "label", "configmap", name, "team=blue", "-n", ns, "-C", "member1"); !strings.Contains(out, "labeled") {
		t.Fatalf("label: %q", out)
	}
	if out := mustCtl(t, "annotate", "configmap", name, "note=hi", "-n", ns, "--operation-scope=members", "--cluster=member1"); !strings.Contains(out, "annotated") {
		t.Fatalf("annotate: %q", out)
	}
	if out := mustCtl(t, "patch", "configmap", name, "-n", ns, "-s", "members", "-C", "member1", "--type=merge", "-p", `{"data":{"size":"3"}}`); !strings.Contains(out, "patched") {
		t.Fatalf("patch: %q", out)
	}
	if r := runMemberCtl(t, "", []string{"KUBE_EDITOR=sed -i s/before/after/"}, "edit", "configmap", name, "-n", ns, "-C", "member1"); r.err != nil || !strings.Contains(r.stdout, "edited") {
		t.Fatalf("edit: %s", r)
	}
	cm := get()
	if cm.Labels["team"] != "blue" || cm.Annotations["note"] != "hi" || cm.Data["size"] != "3" || cm.Data["mode"] != "after" {
		t.Fatalf("member1's ConfigMap after label, annotate, patch and edit: labels %v annotations %v data %v", cm.Labels, cm.Annotations, cm.Data)
	}
	// Without -C the command is the control plane's, which has no such
	// namespace or object.
	r := ctl(t, "label", "configmap", name, "team=red", "-n", ns)
	if !r.failed("NotFound") || strings.Contains(r.stderr, "cluster(") {
		t.Fatalf("label on the control plane: %s\nwant the control plane's NotFound", r)
	}
	if get().Labels["team"] != "blue" {
		t.Fatal("a control-plane label changed member1's object")
	}

	created := "created-" + utilrand.String(5)
	if out := mustCtl(t, "create", "configmap", created, "--from-literal=a=b", "-n", ns, "-C", "member1"); !strings.Contains(out, "created") {
		t.Fatalf("create configmap -C member1: %q", out)
	}
	if cm, err := member.CoreV1().ConfigMaps(ns).Get(t.Context(), created, metav1.GetOptions{}); err != nil || cm.Data["a"] != "b" {
		t.Fatalf("member1's created ConfigMap: %v %v", cm, err)
	}
	for _, n := range []string{name, created} {
		if out := mustCtl(t, "delete", "configmap", n, "-n", ns, "-C", "member1"); !strings.Contains(out, "deleted") {
			t.Fatalf("delete -C member1: %q", out)
		}
		if _, err := member.CoreV1().ConfigMaps(ns).Get(t.Context(), n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("member1's ConfigMap %s after delete -C member1: %v", n, err)
		}
	}
}

// TestControlPlaneObjectCommands: create, label, annotate, patch and
// delete without -C (or with --operation-scope=karmada) act on the
// control plane.
func TestControlPlaneObjectCommands(t *testing.T) {
	ns := framework.Namespace(t, "cli-cp-"+utilrand.String(5))
	name := "cp-" + utilrand.String(5)
	file := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {mode: before}\n", name, ns)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := mustCtl(t, "create", "-f", file); !strings.Contains(out, "configmap/"+name+" created") {
		t.Fatalf("create -f: %q", out)
	}
	host := framework.HostClient(t)
	mustCtl(t, "label", "configmap", name, "team=green", "-n", ns, "--operation-scope=karmada")
	mustCtl(t, "annotate", "configmap", name, "note=cp", "-n", ns)
	mustCtl(t, "patch", "configmap", name, "-n", ns, "-p", `{"data":{"mode":"after"}}`)
	cm, err := host.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || cm.Labels["team"] != "green" || cm.Annotations["note"] != "cp" || cm.Data["mode"] != "after" {
		t.Fatalf("the control plane's ConfigMap: %v %v", cm, err)
	}
	if out := mustCtl(t, "delete", "-f", file); !strings.Contains(out, "deleted") {
		t.Fatalf("delete -f: %q", out)
	}
	if _, err := host.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the control plane's ConfigMap after delete: %v", err)
	}
}

// TestMemberBadInput: an unknown cluster, a missing -C, a contradiction
// of flags: clear errors and a non-zero exit, before anything runs.
func TestMemberBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "web", "-C", "member9"}, `cluster "member9" not found`},
		{[]string{"exec", "web", "-C", "member9", "--", "date"}, `cluster "member9" not found`},
		{[]string{"api-resources", "-C", "member9"}, `cluster "member9" not found`},
		{[]string{"label", "configmap", "x", "a=b", "--operation-scope=members", "--cluster=member9"}, `cluster "member9" not found`},
		{[]string{"top", "pod", "-C", "member9"}, `cluster "member9" not found`},
		{[]string{"logs", "web"}, "must specify a cluster"},
		{[]string{"exec", "web", "--", "date"}, "must specify a cluster"},
		{[]string{"explain", "pods", "--operation-scope=members"}, "must specify a member cluster"},
		{[]string{"delete", "configmap", "x", "-s", "karmada", "-C", "member1"}, "drop -C/--cluster=member1"},
	} {
		if r := ctl(t, tc.args...); !r.failed(tc.want) {
			t.Errorf("flotillactl %s: %s\nwant an error containing %q", strings.Join(tc.args, " "), r, tc.want)
		}
	}
}

// TestMemberDown: a member whose API server is down is an error naming
// it, from the commands that run in it and from top over every member.
func TestMemberDown(t *testing.T) {
	waitMemberProxy(t, "member3")
	// The other members' node metrics first, so that top's only error is
	// member3's.
	framework.Eventually(t, 2*time.Minute, func(context.Context) string {
		if r := ctl(t, "top", "node", "-C", "member1,member2"); r.err != nil {
			return r.String()
		}
		return ""
	})
	framework.StopMember(t, "member3")
	for _, args := range [][]string{
		{"api-resources", "-C", "member3"},
		{"logs", "web", "-C", "member3"},
		{"label", "configmap", "x", "a=b", "-C", "member3"},
	} {
		start := time.Now()
		r := ctl(t, args...)
		if !r.failed("cluster(member3): ") {
			t.Errorf("flotillactl %s with member3 down: %s\nwant an error naming member3", strings.Join(args, " "), r)
		}
		if d := time.Since(start); d > 40*time.Second {
			t.Errorf("flotillactl %s with member3 down took %s", strings.Join(args, " "), d)
		}
	}
	r := ctl(t, "top", "node")
	if !r.failed("cluster(member3): ") || strings.Contains(r.stderr, "cluster(member1)") || strings.Contains(r.stderr, "cluster(member2)") {
		t.Errorf("top node with member3 down: %s\nwant member3's error only", r)
	}
}

// TestVersion: the client's version as karmadactl prints it, and the
// control plane's.
func TestVersion(t *testing.T) {
	sv, err := framework.HostClient(t).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	out := mustCtl(t, "version")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "flotillactl version: version.Info{GitVersion:") || lines[1] != "Server Version: "+sv.GitVersion {
		t.Fatalf("version: %q, want the client line and \"Server Version: %s\"", out, sv.GitVersion)
	}
	if out := mustCtl(t, "version", "--client", "--server=https://127.0.0.1:1"); strings.Contains(out, "Server Version") || !strings.Contains(out, "flotillactl version:") {
		t.Fatalf("version --client: %q", out)
	}
	var v struct {
		ClientVersion struct{ GoVersion string }  `json:"clientVersion"`
		ServerVersion struct{ GitVersion string } `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(mustCtl(t, "version", "-o", "json")), &v); err != nil || v.ServerVersion.GitVersion != sv.GitVersion || v.ClientVersion.GoVersion == "" {
		t.Fatalf("version -o json: %+v %v", v, err)
	}
	r := ctl(t, "version", "--server=https://127.0.0.1:1")
	if !r.failed("reading the control plane's version") || !strings.Contains(r.stdout, "flotillactl version:") {
		t.Fatalf("version with the control plane down: %s\nwant the client line and an error", r)
	}
}

// TestCompletion: completion scripts for every shell, dynamic completion
// of the commands, and "kubectl flotilla" completing through kubectl's
// plugin completion (kubectl_complete-flotilla, a link to the binary).
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		out := mustCtl(t, "completion", shell)
		if len(out) < 100 || !strings.Contains(out, "flotillactl") || !strings.Contains(out, "__complete") {
			t.Errorf("completion %s: %d bytes, want a script for flotillactl that asks it to complete", shell, len(out))
		}
	}
	out := mustCtl(t, "__complete", "")
	for _, sub := range []string{"logs", "exec", "attach", "top", "api-resources", "explain", "create", "delete", "edit", "label", "annotate", "patch", "version", "options", "join"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sub) + `\t`).MatchString(out) {
			t.Errorf("__complete does not offer %s:\n%s", sub, out)
		}
	}
	if out := mustCtl(t, "__complete", "top", ""); !strings.Contains(out, "pod\t") || !strings.Contains(out, "node\t") {
		t.Errorf("__complete top: %q", out)
	}

	// kubectl flotilla: kubectl finds kubectl-flotilla and, to complete,
	// kubectl_complete-flotilla on the PATH.
	dir := t.TempDir()
	bin := filepath.Join(framework.Env.Options.BinDir, "flotillactl")
	for _, name := range []string{"kubectl-flotilla", "kubectl_complete-flotilla"} {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	kubectl := func(args ...string) (string, error) {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "kubectl"), args...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.Output()
		return string(out), err
	}
	if out, err := kubectl("__complete", "flotilla", "lo"); err != nil || !strings.Contains(out, "logs") {
		t.Errorf("kubectl __complete flotilla lo: %q %v, want logs", out, err)
	}
	if out, err := kubectl("flotilla", "version", "--client"); err != nil || !strings.HasPrefix(out, "kubectl flotilla version: ") {
		t.Errorf("kubectl flotilla version --client: %q %v", out, err)
	}
	if out, err := kubectl("flotilla", "completion", "bash"); err != nil || !strings.Contains(out, "kubectl-flotilla") {
		t.Errorf("kubectl flotilla completion bash: %d bytes %v", len(out), err)
	}
}

// TestOptionsAndVerbosity: options lists the global flags, and klog's -v
// shows the requests, which go to the member's proxy.
func TestOptionsAndVerbosity(t *testing.T) {
	out := mustCtl(t, "options")
	for _, f := range []string{"--kubeconfig=", "--karmada-context=", "-v, --v=", "-n, --namespace="} {
		if !strings.Contains(out, f) {
			t.Errorf("options does not list %s:\n%s", f, out)
		}
	}
	waitMemberProxy(t, "member1")
	r := ctl(t, "api-versions", "-C", "member1", "-v=6")
	if r.err != nil || !strings.Contains(r.stderr, "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api") {
		t.Fatalf("api-versions -C member1 -v=6: %s\nwant the requests to member1's proxy logged", r)
	}
	if r := ctl(t, "api-versions", "-C", "member1"); r.err != nil || strings.Contains(r.stderr, "clusters/member1/proxy") {
		t.Fatalf("api-versions -C member1 without -v logs requests: %s", r)
	}
}
