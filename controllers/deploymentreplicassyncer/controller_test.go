package deploymentreplicassyncer

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
)

// start runs a controller over fake host Deployments and bindings.
func start(t *testing.T, ctx context.Context, deployments []runtime.Object, rbs ...runtime.Object) (*Controller, *fake.Clientset, *karmadafake.Clientset) {
	t.Helper()
	host, karmada := fake.NewClientset(deployments...), karmadafake.NewSimpleClientset(rbs...)
	f := externalversions.NewSharedInformerFactory(karmada, 0)
	c, err := New(host, f.Work().V1alpha2().ResourceBindings())
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	go c.Run(ctx, 1)
	return c, host, karmada
}

func deploymentPatches(host *fake.Clientset) map[string]string {
	out := map[string]string{}
	for _, a := range host.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && p.GetResource().Resource == "deployments" {
			out[p.GetName()] = string(p.GetPatch())
		}
	}
	return out
}

func specReplicas(t *testing.T, host *fake.Clientset, name string) int32 {
	t.Helper()
	d, err := host.AppsV1().Deployments("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return *d.Spec.Replicas
}

func TestRunSyncsLabelledDeployments(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	web := newDeployment(2, 5)
	plain := newDeployment(2, 5)
	plain.Name, plain.Labels = "plain", nil
	plainRB := newBinding(2, 2, 3)
	plainRB.Name = "plain-deployment"
	c, host, _ := start(t, ctx, []runtime.Object{web, plain}, newBinding(2, 2, 3), plainRB)

	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return specReplicas(t, host, "web") == 5, nil
	}); err != nil {
		t.Fatalf("spec.replicas of web stayed %d, want 5", specReplicas(t, host, "web"))
	}
	patches := deploymentPatches(host)
	if want := `{"metadata":{"resourceVersion":"7"},"spec":{"replicas":5}}`; patches["web"] != want {
		t.Errorf("patch of web %s, want %s", patches["web"], want)
	}
	if p, ok := patches["plain"]; ok {
		t.Errorf("unlabelled Deployment patched: %s", p)
	}
	if _, err := c.deployments.Deployments("default").Get("plain"); err == nil {
		t.Error("unlabelled Deployment cached")
	}
	if got := specReplicas(t, host, "plain"); got != 2 {
		t.Errorf("spec.replicas of plain %d, want 2", got)
	}
}

// TestRunWaitsForScheduling checks the wait: the binding's new generation
// is scheduled after the Deployment event; the binding's update brings the
// Deployment back.
func TestRunWaitsForScheduling(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rb := newBinding(2, 2, 3)
	rb.Generation = 5
	_, host, karmada := start(t, ctx, []runtime.Object{newDeployment(2, 5)}, rb)

	time.Sleep(300 * time.Millisecond)
	if p := deploymentPatches(host); len(p) != 0 {
		t.Fatalf("patched before scheduling: %v", p)
	}
	rb.Status.SchedulerObservedGeneration = 5
	if _, err := karmada.WorkV1alpha2().ResourceBindings("default").UpdateStatus(ctx, rb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return specReplicas(t, host, "web") == 5, nil
	}); err != nil {
		t.Fatal("spec.replicas never synced after scheduling")
	}
}

// TestReconcileNotCached checks that a Deployment outside the cache (gone,
// or without the label) is left alone.
func TestReconcileNotCached(t *testing.T) {
	t.Parallel()
	host, karmada := fake.NewClientset(), karmadafake.NewSimpleClientset(newBinding(2, 2, 3))
	f := externalversions.NewSharedInformerFactory(karmada, 0)
	c, err := New(host, f.Work().V1alpha2().ResourceBindings())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.reconcile(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	if len(host.Actions()) != 0 {
		t.Errorf("actions %v, want none", host.Actions())
	}
}
