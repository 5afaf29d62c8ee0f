package manager

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/testutil"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/member"
)

// A standby's warm informers list once, before the takeover; the handlers
// registered at the takeover get every object from memory, marked as of
// the initial list, and the takeover lists nothing again. An informer the
// warm list misses is counted cold.
func TestWarmThenTakeOver(t *testing.T) {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web-deployment", Namespace: "default"},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}}}
	karmada, host := fake.NewSimpleClientset(rb), k8sfake.NewSimpleClientset()
	deployment := &unstructured.Unstructured{}
	deployment.SetAPIVersion("apps/v1")
	deployment.SetKind("Deployment")
	deployment.SetNamespace("default")
	deployment.SetName("web")
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{deployments: "DeploymentList"}, deployment)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(deployments.GroupVersion().WithKind("Deployment"), meta.RESTScopeNamespace)
	c := &Context{
		KarmadaInformers: externalversions.NewSharedInformerFactory(karmada, 0),
		HostInformers:    informers.NewSharedInformerFactory(host, 0),
		Templates:        templates.New(dyn, resettable{mapper}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	took := make(chan struct{})
	warmed := warm(ctx, c, took)
	if len(warmed) != len(warmInformers(c)) {
		t.Fatalf("warm started %d kinds, want %d", len(warmed), len(warmInformers(c)))
	}
	bindings := c.KarmadaInformers.Work().V1alpha2().ResourceBindings().Informer()
	syncCtx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	for _, inf := range warmInformers(c) {
		if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
			t.Fatal("a warm informer never synced")
		}
	}
	lists := func() int {
		n := 0
		for _, a := range append(karmada.Actions(), host.Actions()...) {
			if a.GetVerb() == "list" {
				n++
			}
		}
		return n
	}
	listsBefore := lists()
	if listsBefore != len(warmed) {
		t.Errorf("warming listed %d times, want once per kind (%d)", listsBefore, len(warmed))
	}
	// The templates the binding names are watched too.
	deploymentGVK := deployments.GroupVersion().WithKind("Deployment")
	for !c.Templates.Synced(deploymentGVK) {
		select {
		case <-syncCtx.Done():
			t.Fatal("the standby never watched the Deployments a binding names")
		case <-time.After(10 * time.Millisecond):
		}
	}
	templateLists := len(dyn.Actions())

	// The takeover: a controller registers its handler and the factories
	// start what is new (nothing).
	leaseCtx, lose := context.WithCancel(ctx)
	defer lose()
	c.tookOver(took)
	listed := make(chan string, 1)
	c.Templates.AddHandler(listedHandler(func(u *member.Compact) { listed <- u.GetName() }))
	select {
	case got := <-listed:
		if got != "web" {
			t.Errorf("the template handler registered at the takeover was given %q, want web", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the template handler registered at the takeover was not given the cached Deployment as listed")
	}
	if n := len(dyn.Actions()); n != templateLists {
		t.Errorf("the takeover made %d requests for templates, want none", n-templateLists)
	}
	initial := make(chan bool, 1)
	if _, err := bindings.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, isInInitialList bool) { initial <- isInInitialList },
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-initial:
		if !got {
			t.Error("the replayed binding was not marked as of the initial list")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler registered at the takeover was not given the cached binding")
	}
	c.KarmadaInformers.Start(leaseCtx.Done())
	c.HostInformers.Start(leaseCtx.Done())
	coldAtTakeover(ctx, c, warmed, time.Second)
	if after := lists(); after != listsBefore {
		t.Errorf("the takeover listed %d times, want none", after-listsBefore)
	}
	if v, _ := testutil.GetGaugeMetricValue(coldInformers); v != 0 {
		t.Errorf("cold informers %v, want 0", v)
	}
	if v, _ := testutil.GetGaugeMetricValue(warmInformersStarted); int(v) != len(warmed) {
		t.Errorf("warm informers %v, want %d", v, len(warmed))
	}

	// A controller reading a kind the warm list misses.
	_ = c.KarmadaInformers.Config().V1alpha1().ResourceInterpreterCustomizations().Informer()
	c.KarmadaInformers.Start(leaseCtx.Done())
	coldAtTakeover(ctx, c, warmed, time.Second)
	if v, _ := testutil.GetGaugeMetricValue(coldInformers); v != 1 {
		t.Errorf("cold informers %v, want 1", v)
	}
	// A lost lease leaves the warm informers running.
	lose()
	if bindings.IsStopped() {
		t.Error("the lease's end stopped a warm informer")
	}
}

type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// listedHandler receives the templates told as listed.
type listedHandler func(*member.Compact)

func (listedHandler) OnTemplate(schema.GroupVersionKind, *member.Compact, *member.Compact, bool) {
}
func (h listedHandler) OnTemplateListed(_ schema.GroupVersionKind, u *member.Compact) {
	h(u)
}
