// Package testbed checks the test bed itself: members run workloads and
// serve resource metrics, the host's controllers finalize namespaces, and
// the host aggregates extension API servers with the caller's identity.
package testbed

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "testbed", env.Options{Members: []env.MemberOptions{
		{Name: "member1", Nodes: env.NodeOptions{Count: 2}},
		{Name: "member2", Nodes: env.NodeOptions{Count: 1, CPU: "8", Memory: "16Gi", Labels: map[string]string{"topology.kubernetes.io/zone": "zone-b"}}},
	}, MetricsResolution: env.MinMetricsResolution})
}

// A Deployment in a member becomes fully Ready: scheduler, controller manager
// and kwok work together.
func TestMemberRunsDeployment(t *testing.T) {
	t.Parallel()
	cs, err := framework.Member(t, "member1").Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	labels := map[string]string{"app": "nginx"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *appsv1.Deployment
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err = cs.AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.ReadyReplicas == 3 && got.Status.AvailableReplicas == 3, nil
	})
	if err != nil {
		t.Fatalf("deployment did not reach 3/3 Ready: %v; status %+v", err, got.Status)
	}
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" || p.Status.PodIP == "" {
			t.Errorf("pod %s: phase %s node %q IP %q; want Running on a node with an IP", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP)
		}
	}
}

// Members have the fake nodes their options asked for, Ready, with their
// capacity and labels.
func TestMemberNodes(t *testing.T) {
	t.Parallel()
	cs, err := framework.Member(t, "member2").Client()
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 {
		t.Fatalf("member2 has %d nodes, want 1", len(nodes.Items))
	}
	n := nodes.Items[0]
	if cpu := n.Status.Allocatable.Cpu().String(); cpu != "8" {
		t.Errorf("allocatable cpu %s, want 8", cpu)
	}
	if mem := n.Status.Allocatable.Memory().String(); mem != "16Gi" {
		t.Errorf("allocatable memory %s, want 16Gi", mem)
	}
	if zone := n.Labels["topology.kubernetes.io/zone"]; zone != "zone-b" {
		t.Errorf("zone label %q, want zone-b", zone)
	}
	ready := false
	for _, c := range n.Status.Conditions {
		ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
	}
	if !ready {
		t.Errorf("node %s is not Ready: %+v", n.Name, n.Status.Conditions)
	}
}

// A Namespace deleted on the host is finalized: its content is removed and
// the Namespace goes, which needs the host's namespace controller.
func TestHostFinalizesNamespace(t *testing.T) {
	t.Parallel()
	cs, err := framework.Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "content", Namespace: "doomed"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps("doomed").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var phase corev1.NamespacePhase
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		phase = got.Status.Phase
		return false, nil
	})
	if err != nil {
		t.Fatalf("namespace was not finalized (phase %s): %v", phase, err)
	}
	// The service-account controllers run too: a new namespace gets its
	// default ServiceAccount and the root CA ConfigMap.
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fresh"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, saErr := cs.CoreV1().ServiceAccounts("fresh").Get(ctx, "default", metav1.GetOptions{})
		_, cmErr := cs.CoreV1().ConfigMaps("fresh").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return saErr == nil && cmErr == nil, nil
	})
	if err != nil {
		t.Fatalf("namespace fresh did not get its default ServiceAccount and kube-root-ca.crt: %v", err)
	}
}
