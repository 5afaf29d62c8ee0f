package hpascaletargetmarker

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
)

func deployment(name string, labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels},
	}
}

func newMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	return m
}

// fixture is a controller over fake clients: HPAs in host, their targets
// in dyn.
type fixture struct {
	host *fake.Clientset
	dyn  *dynamicfake.FakeDynamicClient
	ctrl *Controller
	hpas informers.SharedInformerFactory
}

func newFixture(t *testing.T, hpas []runtime.Object, targets ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{host: fake.NewClientset(hpas...), dyn: dynamicfake.NewSimpleDynamicClient(scheme.Scheme, targets...)}
	f.hpas = informers.NewSharedInformerFactory(f.host, 0)
	var err error
	if f.ctrl, err = New(f.hpas.Autoscaling().V2().HorizontalPodAutoscalers(), f.dyn, newMapper()); err != nil {
		t.Fatal(err)
	}
	return f
}

// labels returns the labels of the Deployment name in dyn.
func (f *fixture) labels(t *testing.T, name string) map[string]string {
	t.Helper()
	u, err := f.dyn.Resource(appsv1.SchemeGroupVersion.WithResource("deployments")).Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u.GetLabels()
}

func (f *fixture) patches() []clienttesting.PatchAction {
	var out []clienttesting.PatchAction
	for _, a := range f.dyn.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok {
			out = append(out, p)
		}
	}
	return out
}

// TestReconcilePatch drives reconcile directly over a synced cache.
func TestReconcilePatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		hpas       []runtime.Object
		target     map[string]string
		key        string
		wantLabels map[string]string
		wantPatch  string
	}{
		{
			name: "mark", hpas: []runtime.Object{newHPA("h", "web", true)}, target: map[string]string{"app": "web"},
			key:        targetKey(mark, "default", ref("web")),
			wantLabels: map[string]string{"app": "web", retainLabel: "true"},
			wantPatch:  `{"metadata":{"labels":{"` + retainLabel + `":"true"}}}`,
		},
		{
			name: "already marked", hpas: []runtime.Object{newHPA("h", "web", true)}, target: map[string]string{retainLabel: "true"},
			key: targetKey(mark, "default", ref("web")), wantLabels: map[string]string{retainLabel: "true"},
		},
		{
			name: "unpropagated HPA", hpas: []runtime.Object{newHPA("h", "web", false)}, target: map[string]string{"app": "web"},
			key: targetKey(mark, "default", ref("web")), wantLabels: map[string]string{"app": "web"},
		},
		{
			name: "unmark", target: map[string]string{"app": "web", retainLabel: "true"},
			key: targetKey(unmark, "default", ref("web")), wantLabels: map[string]string{"app": "web"},
			wantPatch: `{"metadata":{"labels":{"` + retainLabel + `":null}}}`,
		},
		{
			name: "unmark while still scaled", hpas: []runtime.Object{newHPA("other", "web", true)}, target: map[string]string{retainLabel: "true"},
			key: targetKey(unmark, "default", ref("web")), wantLabels: map[string]string{retainLabel: "true"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.hpas, deployment("web", tc.target))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f.hpas.Start(ctx.Done())
			f.hpas.WaitForCacheSync(ctx.Done())
			if err := f.ctrl.reconcile(ctx, tc.key); err != nil {
				t.Fatal(err)
			}
			got := f.labels(t, "web")
			if len(got) != len(tc.wantLabels) {
				t.Errorf("labels %v, want %v", got, tc.wantLabels)
			}
			for k, v := range tc.wantLabels {
				if got[k] != v {
					t.Errorf("labels %v, want %v", got, tc.wantLabels)
				}
			}
			patches := f.patches()
			switch {
			case tc.wantPatch == "" && len(patches) != 0:
				t.Errorf("patched %s, want no patch", patches[0].GetPatch())
			case tc.wantPatch != "" && len(patches) != 1:
				t.Errorf("%d patches, want 1", len(patches))
			case tc.wantPatch != "" && string(patches[0].GetPatch()) != tc.wantPatch:
				t.Errorf("patch %s, want %s", patches[0].GetPatch(), tc.wantPatch)
			}
		})
	}
}

func TestReconcileTargetGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []runtime.Object{newHPA("h", "web", true)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.hpas.Start(ctx.Done())
	f.hpas.WaitForCacheSync(ctx.Done())
	if err := f.ctrl.reconcile(ctx, targetKey(mark, "default", ref("web"))); err != nil {
		t.Errorf("missing target: %v, want nil", err)
	}
	bad := ref("web")
	bad.Kind = "Unknown"
	h := newHPA("u", "web", true)
	h.Spec.ScaleTargetRef = bad
	if _, err := f.host.AutoscalingV2().HorizontalPodAutoscalers("default").Create(ctx, h, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		_, err := f.ctrl.hpas.HorizontalPodAutoscalers("default").Get("u")
		return err == nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.ctrl.reconcile(ctx, targetKey(mark, "default", bad)); err == nil {
		t.Error("unknown kind: nil error, want one to retry")
	}
}

// TestRun follows an HPA through its life: created, retargeted, deleted.
func TestRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []runtime.Object{newHPA("h", "web", true), newHPA("plain", "api", false)},
		deployment("web", nil), deployment("api", nil), deployment("db", nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.hpas.Start(ctx.Done())
	go f.ctrl.Run(ctx, 1)

	hpas := f.host.AutoscalingV2().HorizontalPodAutoscalers("default")
	waitFor := func(what string, want map[string]bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			for name, marked := range want {
				if (f.labels(t, name)[retainLabel] == "true") != marked {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			t.Fatalf("%s: marks never became %v", what, want)
		}
	}
	waitFor("created", map[string]bool{"web": true, "api": false, "db": false})

	h, err := hpas.Get(ctx, "h", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.Spec.ScaleTargetRef = ref("db")
	if _, err := hpas.Update(ctx, h, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("retargeted", map[string]bool{"web": false, "api": false, "db": true})

	if err := hpas.Delete(ctx, "h", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("deleted", map[string]bool{"web": false, "api": false, "db": false})
}
