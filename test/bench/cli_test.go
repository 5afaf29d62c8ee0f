package bench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestCLIGetPods: flotillactl get pods --operation-scope=members
// -A over the three members holding 1,000 pods each, read through
// clusters/{name}/proxy, against kubectl get pods -A on member1 alone
// (1,000 pods), run alternately so both see the same machine. The pods
// are made directly in the members, bound to their kwok node.
func TestCLIGetPods(t *testing.T) {
	const perMember = 1000
	const ns = "bench-cli"
	members := []string{"member1", "member2", "member3"}
	for _, m := range members {
		c := memberClient(t, m)
		fillPods(t, c, m, ns, perMember)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = c.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		})
	}

	bin := framework.Env.Options.BinDir
	cache := t.TempDir()
	flotillactl := []string{filepath.Join(bin, "flotillactl"), "get", "pods", "--operation-scope=members", "-A",
		"--kubeconfig=" + framework.Env.Host.Kubeconfig, "--cache-dir=" + cache}
	kubectl := []string{filepath.Join(bin, "kubectl"), "get", "pods", "-A",
		"--kubeconfig=" + framework.Member(t, "member1").Kubeconfig, "--cache-dir=" + cache}
	// run returns the command's duration and the rows it printed of ns.
	run := func(argv []string) (time.Duration, int) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
		d := time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", strings.Join(argv, " "), err)
		}
		return d, strings.Count(string(out), "\n"+ns+" ")
	}
	for range 3 { // warm caches and connections, and check the rows
		if _, rows := run(flotillactl); rows != len(members)*perMember {
			t.Fatalf("flotillactl printed %d pods of %s, want %d", rows, ns, len(members)*perMember)
		}
		if _, rows := run(kubectl); rows != perMember {
			t.Fatalf("kubectl printed %d pods of %s, want %d", rows, ns, perMember)
		}
	}
	const n = 15
	var f, k []time.Duration
	for range n {
		d, _ := run(flotillactl)
		f = append(f, d)
		d, _ = run(kubectl)
		k = append(k, d)
	}
	fm, km := percentile(f, .5), percentile(k, .5)
	record(t, "cli-get.txt", fmt.Sprintf("CLI get (n=%d, median / p90): `flotillactl get pods --operation-scope=members -A` over 3 members x %d pods "+
		"%v / %v; `kubectl get pods -A` on member1 (%d pods) %v / %v; ratio of medians %.2f (goal <= 1.5)\n",
		n, perMember, fm.Round(time.Millisecond), percentile(f, .9).Round(time.Millisecond), perMember,
		km.Round(time.Millisecond), percentile(k, .9).Round(time.Millisecond), float64(fm)/float64(km)))
}

// fillPods creates namespace ns and n pods in it on the member's kwok
// node, and waits until kwok reports them all Running.
func fillPods(t *testing.T, c kubernetes.Interface, member, ns string, n int) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	node := framework.Member(t, member).Nodes[0]
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%04d", i), Namespace: ns, Labels: map[string]string{"app": "bench-cli"}},
					Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
				}
				if _, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("creating pods in %s: %v", member, err)
	default:
	}
	framework.Eventually(t, 5*time.Minute, func(ctx context.Context) string {
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err.Error()
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running != n {
			return fmt.Sprintf("%s: %d of %d pods Running", member, running, n)
		}
		return ""
	})
}
