package testbed

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// A pod whose image is in the fake registry is scheduled and gets an IP, but
// its container waits in ImagePullBackOff as a kubelet reports an unpullable
// image, and it never becomes Ready; the same Deployment with a real image
// becomes Ready beside it. In a pod with both, only the fake image's
// container waits.
func TestFakeRegistryImageNeverReady(t *testing.T) {
	t.Parallel()
	member := framework.Member(t, "member1")
	cs := framework.MemberClient(t, "member1")
	ctx := t.Context()
	const ns = "fake-registry"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})

	fakeImage := env.FakeImageRegistry + "/nginx"
	for name, containers := range map[string][]corev1.Container{
		"real":       {{Name: "nginx", Image: "nginx"}},
		"unpullable": {{Name: "nginx", Image: fakeImage}},
		"mixed":      {{Name: "app", Image: fakeImage + ":1.27"}, {Name: "sidecar", Image: "nginx:1.27"}},
	} {
		labels := map[string]string{"app": name}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: containers},
				},
			},
		}
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		p, err := onePod(ctx, cs, ns, "real")
		if err != nil {
			return err.Error()
		}
		if !podReady(p) || p.Status.Phase != corev1.PodRunning {
			return fmt.Sprintf("pod %s of the real image: phase %s, Ready %v", p.Name, p.Status.Phase, podReady(p))
		}
		return ""
	})

	// From now until 10 s after the real image's pod is Ready, the fake
	// images' pods are never Ready.
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); <-tick.C {
		for _, app := range []string{"unpullable", "mixed"} {
			if p, err := onePod(ctx, cs, ns, app); err == nil && podReady(p) {
				t.Fatalf("pod %s with image %s became Ready: %+v", p.Name, fakeImage, p.Status)
			}
		}
	}

	// They are scheduled, have an IP, are Pending with the fake image's
	// container waiting in ImagePullBackOff, the others running.
	var unpullable, mixedPod *corev1.Pod
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		var err error
		if unpullable, err = onePod(ctx, cs, ns, "unpullable"); err != nil {
			return err.Error()
		}
		if mixedPod, err = onePod(ctx, cs, ns, "mixed"); err != nil {
			return err.Error()
		}
		return backingOff(unpullable, map[string]bool{"nginx": false}) + backingOff(mixedPod, map[string]bool{"app": false, "sidecar": true})
	})

	// Their Deployments count them unavailable.
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		for _, name := range []string{"unpullable", "mixed"} {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			if d.Status.Replicas != 1 || d.Status.ReadyReplicas != 0 || d.Status.UnavailableReplicas != 1 {
				return fmt.Sprintf("deployment %s: replicas %d, ready %d, unavailable %d; want 1, 0 and 1", name, d.Status.Replicas, d.Status.ReadyReplicas, d.Status.UnavailableReplicas)
			}
		}
		return ""
	})

	// kubectl shows them as it shows an unpullable image.
	out, err := framework.KubectlAt(t, member.Kubeconfig, "get", "pods", "-n", ns, "--no-headers", "-l", "app in (unpullable,mixed)")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]string{unpullable.Name: "0/1", mixedPod.Name: "1/2"}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(want) {
		t.Errorf("kubectl get pods:\n%s\nwant the pods %v", out, want)
	}
	for _, line := range lines {
		f := strings.Fields(line) // NAME READY STATUS RESTARTS AGE
		if len(f) < 3 || want[f[0]] == "" || f[1] != want[f[0]] || f[2] != env.ReasonImagePullBackOff {
			t.Errorf("kubectl get pods: %q, want READY %v and STATUS %s", line, want, env.ReasonImagePullBackOff)
		}
	}

	// ... and the kubelet's event, which kubectl describe lists.
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", unpullable.Name).String()})
		if err != nil {
			return err.Error()
		}
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && e.Reason == "Failed" && e.Message == "Error: "+env.ReasonImagePullBackOff {
				return ""
			}
		}
		return fmt.Sprintf("no Warning Failed event %q for pod %s: %+v", "Error: "+env.ReasonImagePullBackOff, unpullable.Name, events.Items)
	})
}

// backingOff says how p differs from a scheduled pod, with an IP, Pending
// and not Ready, whose containers are running and ready (wantReady true) or
// waiting in ImagePullBackOff for their image; "" when it does not.
func backingOff(p *corev1.Pod, wantReady map[string]bool) string {
	var complaints []string
	if p.Spec.NodeName == "" || p.Status.PodIP == "" || p.Status.Phase != corev1.PodPending {
		complaints = append(complaints, fmt.Sprintf("node %q, IP %q, phase %s; want scheduled, with an IP, Pending", p.Spec.NodeName, p.Status.PodIP, p.Status.Phase))
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && (c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotReady") {
			complaints = append(complaints, fmt.Sprintf("Ready condition %+v, want False ContainersNotReady", c))
		}
	}
	if len(p.Status.ContainerStatuses) != len(wantReady) {
		complaints = append(complaints, fmt.Sprintf("container statuses %+v, want %d", p.Status.ContainerStatuses, len(wantReady)))
	}
	for _, s := range p.Status.ContainerStatuses {
		switch ready := wantReady[s.Name]; {
		case ready && (!s.Ready || s.State.Running == nil):
			complaints = append(complaints, fmt.Sprintf("container %s (image %s) ready %v, %+v, want running and ready", s.Name, s.Image, s.Ready, s.State))
		case !ready && (s.Ready || s.State.Waiting == nil || s.State.Waiting.Reason != env.ReasonImagePullBackOff || !strings.Contains(s.State.Waiting.Message, s.Image)):
			complaints = append(complaints, fmt.Sprintf("container %s (image %s) ready %v, %+v, want waiting in %s", s.Name, s.Image, s.Ready, s.State, env.ReasonImagePullBackOff))
		}
	}
	if len(complaints) == 0 {
		return ""
	}
	return fmt.Sprintf("pod %s: %s; ", p.Name, strings.Join(complaints, "; "))
}

// onePod returns the one pod labelled app=<app> in ns.
func onePod(ctx context.Context, cs kubernetes.Interface, ns, app string) (*corev1.Pod, error) {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return nil, err
	}
	if len(pods.Items) != 1 {
		return nil, fmt.Errorf("%d pods labelled app=%s, want 1", len(pods.Items), app)
	}
	return &pods.Items[0], nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
