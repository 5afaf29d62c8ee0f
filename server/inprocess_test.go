package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	generatedopenapi "github.com/flotilla-io/flotilla/apis/generated/openapi"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/server"
)

// storageServer runs flotilla-apiserver's storage (no host: no
// controllers, search or metrics) on embedded etcd, reached in process as
// flotilla-apiserver does, and returns the server, its HTTP client and its
// in-process client.
func storageServer(t testing.TB) (*server.Server, versioned.Interface, versioned.Interface) {
	t.Helper()
	return storageServerOver(t, true)
}

// storageServerOver is storageServer with the registry's storage reaching
// the embedded etcd in process (local) or over gRPC, as with
// --etcd-servers.
func storageServerOver(t testing.TB, local bool) (*server.Server, versioned.Interface, versioned.Interface) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	etcd, err := server.StartEmbeddedEtcd(ctx, t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	st := server.NewStorage()
	o := st.RecommendedOptions("/registry")
	o.Etcd.StorageConfig.Transport.ServerList = []string{etcd.ClientURL}
	o.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	o.SecureServing.ServerCert.CertDirectory = t.TempDir()
	if o.SecureServing.Listener, o.SecureServing.BindPort, err = genericoptions.CreateListener("tcp", "127.0.0.1:0", net.ListenConfig{}); err != nil {
		t.Fatal(err)
	}
	// Only the loopback identity is let in: no host to delegate to.
	o.Authentication, o.Authorization, o.CoreAPI, o.Admission = nil, nil, nil, nil
	o.Features.EnablePriorityAndFairness = false
	cfg := genericapiserver.NewRecommendedConfig(st.Codecs)
	cfg.Serializer = st.NegotiatedSerializer()
	namer := openapi.NewDefinitionNamer(st.Scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	cfg.FeatureGate = utilfeature.DefaultFeatureGate
	cfg.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	if err := o.ApplyTo(cfg); err != nil {
		t.Fatal(err)
	}
	if local {
		if cfg.RESTOptionsGetter, err = etcd.Storage(cfg.RESTOptionsGetter, o.Etcd); err != nil {
			t.Fatal(err)
		}
	}
	srvCfg := &server.Config{GenericConfig: cfg, Scheme: st.Scheme, Codecs: st.Codecs}
	s, err := srvCfg.Complete().New()
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := s.Run(ctx); err != nil {
			t.Errorf("server: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
		etcd.Close()
	})
	overHTTP, err := versioned.NewForConfig(rest.CopyConfig(s.GenericAPIServer.LoopbackClientConfig))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := overHTTP.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server is not ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s, overHTTP, s.Storage.Client(overHTTP)
}

// sameRefusal fails unless both writes were refused with the same status.
func sameRefusal(t *testing.T, what string, overHTTP, inProcess error) {
	t.Helper()
	var h, p *apierrors.StatusError
	if !errors.As(overHTTP, &h) || !errors.As(inProcess, &p) {
		t.Fatalf("%s: want two refusals, got over HTTP %v, in process %v", what, overHTTP, inProcess)
	}
	hs, ps := h.ErrStatus, p.ErrStatus
	hs.TypeMeta, ps.TypeMeta = metav1.TypeMeta{}, metav1.TypeMeta{}
	if !reflect.DeepEqual(hs, ps) {
		t.Errorf("%s: refused differently\n over HTTP:  %+v\n in process: %+v", what, hs, ps)
	}
}

// TestInProcessRefusesWhatHTTPRefuses: a write the server refuses over
// HTTP (a bad field, a FederatedResourceQuota exceeded, a stale
// resourceVersion in an update or a patch) is refused in process with the
// same status, and changes nothing.
func TestInProcessRefusesWhatHTTPRefuses(t *testing.T) {
	_, overHTTP, inProcess := storageServer(t)
	ctx := t.Context()
	const ns = "team-a"

	t.Run("bad field", func(t *testing.T) {
		bad := func(name string) *policyv1alpha1.PropagationPolicy {
			return &policyv1alpha1.PropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: policyv1alpha1.PropagationSpec{
					ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1"}},
				},
			}
		}
		_, errHTTP := overHTTP.PolicyV1alpha1().PropagationPolicies(ns).Create(ctx, bad("p"), metav1.CreateOptions{})
		_, errProc := inProcess.PolicyV1alpha1().PropagationPolicies(ns).Create(ctx, bad("p"), metav1.CreateOptions{})
		if !apierrors.IsInvalid(errProc) {
			t.Errorf("in process: got %v, want Invalid", errProc)
		}
		sameRefusal(t, "a resource selector without kind", errHTTP, errProc)
		if _, err := overHTTP.PolicyV1alpha1().PropagationPolicies(ns).Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the refused policy: got %v, want NotFound", err)
		}
	})

	t.Run("quota exceeded", func(t *testing.T) {
		quota := &policyv1alpha1.FederatedResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: ns},
			Spec:       policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		}
		if _, err := inProcess.PolicyV1alpha1().FederatedResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := func(name string) *workv1alpha2.ResourceBinding {
			return &workv1alpha2.ResourceBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: workv1alpha2.ResourceBindingSpec{
					Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name},
					Replicas: 2,
					ReplicaRequirements: &workv1alpha2.ReplicaRequirements{
						ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
					},
					Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}},
				},
			}
		}
		// The quota is read from the watch cache: wait until it counts.
		var errHTTP error
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, errHTTP = overHTTP.WorkV1alpha2().ResourceBindings(ns).Create(ctx, binding("web"), metav1.CreateOptions{})
			if errHTTP != nil || time.Now().After(deadline) {
				break
			}
			if err := overHTTP.WorkV1alpha2().ResourceBindings(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		_, errProc := inProcess.WorkV1alpha2().ResourceBindings(ns).Create(ctx, binding("web"), metav1.CreateOptions{})
		if !apierrors.IsForbidden(errProc) || !strings.Contains(errProc.Error(), "exceed") {
			t.Errorf("in process: got %v, want the quota's refusal", errProc)
		}
		sameRefusal(t, "two CPUs against a quota of one", errHTTP, errProc)
		if _, err := overHTTP.WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the refused binding: got %v, want NotFound", err)
		}
	})

	t.Run("stale resourceVersion", func(t *testing.T) {
		work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns, Labels: map[string]string{"v": "1"}}}
		created, err := inProcess.WorkV1alpha1().Works(ns).Create(ctx, work, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		changed := created.DeepCopy()
		changed.Labels["v"] = "2"
		current, err := inProcess.WorkV1alpha1().Works(ns).Update(ctx, changed, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stale := created.DeepCopy()
		stale.Labels["v"] = "3"
		_, errHTTP := overHTTP.WorkV1alpha1().Works(ns).Update(ctx, stale, metav1.UpdateOptions{})
		_, errProc := inProcess.WorkV1alpha1().Works(ns).Update(ctx, stale, metav1.UpdateOptions{})
		if !apierrors.IsConflict(errProc) {
			t.Errorf("update in process: got %v, want Conflict", errProc)
		}
		sameRefusal(t, "an update at a stale resourceVersion", errHTTP, errProc)

		patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"labels":{"v":"4"}}}`, created.ResourceVersion)
		_, errHTTP = overHTTP.WorkV1alpha1().Works(ns).Patch(ctx, "w", types.MergePatchType, patch, metav1.PatchOptions{})
		_, errProc = inProcess.WorkV1alpha1().Works(ns).Patch(ctx, "w", types.MergePatchType, patch, metav1.PatchOptions{})
		if !apierrors.IsConflict(errProc) {
			t.Errorf("patch in process: got %v, want Conflict", errProc)
		}
		sameRefusal(t, "a patch at a stale resourceVersion", errHTTP, errProc)
		got, err := overHTTP.WorkV1alpha1().Works(ns).Get(ctx, "w", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Labels["v"] != "2" || got.ResourceVersion != current.ResourceVersion {
			t.Errorf("the Work after refused writes: labels %v at %s, want v=2 at %s", got.Labels, got.ResourceVersion, current.ResourceVersion)
		}
	})
}

// TestInProcessWrites: in-process writes (create, update, merge, JSON and
// strategic patches, status, delete) store what the same write over HTTP
// stores.
func TestInProcessWrites(t *testing.T) {
	_, overHTTP, inProcess := storageServer(t)
	ctx := t.Context()
	const ns = "team-b"
	for _, c := range []struct {
		name   string
		client versioned.Interface
	}{{"http", overHTTP}, {"inprocess", inProcess}} {
		works := c.client.WorkV1alpha1().Works(ns)
		name := "w-" + c.name
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"a": "1"}}}
		if _, err := works.Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if w.ResourceVersion != "" || w.UID != "" {
			t.Errorf("%s: Create changed the caller's object: %+v", c.name, w.ObjectMeta)
		}
		if _, err := works.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"b":"2"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s merge patch: %v", c.name, err)
		}
		if _, err := works.Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/finalizers","value":["x.io/f"]}]`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s JSON patch: %v", c.name, err)
		}
		if _, err := works.Patch(ctx, name, types.StrategicMergePatchType, []byte(`{"metadata":{"annotations":{"c":"3"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s strategic merge patch: %v", c.name, err)
		}
		status := []byte(`{"status":{"conditions":[{"type":"Applied","status":"True","reason":"AppliedSuccessful","message":"ok","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
		if _, err := works.Patch(ctx, name, types.MergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("%s status patch: %v", c.name, err)
		}
		if err := works.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("%s delete: %v", c.name, err)
		}
	}
	h, err := overHTTP.WorkV1alpha1().Works(ns).Get(ctx, "w-http", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := overHTTP.WorkV1alpha1().Works(ns).Get(ctx, "w-inprocess", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Each Work gets its own permanent ID.
	if h.Labels[workv1alpha2.WorkPermanentIDLabel] == "" || p.Labels[workv1alpha2.WorkPermanentIDLabel] == "" {
		t.Errorf("a Work without its permanent ID: over HTTP %v, in process %v", h.Labels, p.Labels)
	}
	delete(h.Labels, workv1alpha2.WorkPermanentIDLabel)
	delete(p.Labels, workv1alpha2.WorkPermanentIDLabel)
	if !reflect.DeepEqual(h.Labels, p.Labels) || !reflect.DeepEqual(h.Annotations, p.Annotations) || !reflect.DeepEqual(h.Finalizers, p.Finalizers) ||
		h.DeletionTimestamp.IsZero() != p.DeletionTimestamp.IsZero() || !reflect.DeepEqual(h.Status, p.Status) {
		t.Errorf("stored differently:\n over HTTP:  %+v %+v\n in process: %+v %+v", h.ObjectMeta, h.Status, p.ObjectMeta, p.Status)
	}
	if p.Generation != h.Generation {
		t.Errorf("generation: in process %d, over HTTP %d", p.Generation, h.Generation)
	}
}

// TestInProcessObjectsNotShared runs, under the race detector, what the
// controllers do: informers fed in process (the watch cache's objects
// themselves), writers that copy what they read and write in process,
// clients that read over HTTP (the server encodes the same objects) and
// in process. Anything that changed an object it shares is a data race.
func TestInProcessObjectsNotShared(t *testing.T) {
	s, overHTTP, inProcess := storageServer(t)
	ctx := t.Context()
	const ns, n = "team-c", 20
	factory := externalversions.NewSharedInformerFactory(s.Storage.Informers(overHTTP.(*versioned.Clientset)), 0)
	policies := factory.Policy().V1alpha1().PropagationPolicies()
	works := factory.Work().V1alpha1().Works()
	policyLister, workLister := policies.Lister(), works.Lister()
	_ = policies.Informer()
	_ = works.Informer()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), policies.Informer().HasSynced, works.Informer().HasSynced) {
		t.Fatal("informers did not sync")
	}
	for i := range n {
		p := &policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: ns, Labels: map[string]string{"n": "0"}},
			Spec:       policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}}},
		}
		if _, err := inProcess.PolicyV1alpha1().PropagationPolicies(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d", i), Namespace: ns, Labels: map[string]string{"n": "0"}}}
		if _, err := inProcess.WorkV1alpha1().Works(ns).Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	httpWatch, err := overHTTP.PolicyV1alpha1().PropagationPolicies(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer httpWatch.Stop()
	go func() {
		for range httpWatch.ResultChan() {
		}
	}()

	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range n {
		wg.Go(func() {
			for round := 1; round <= 10; round++ {
				// A controller: read from the lister, copy, write.
				p, err := policyLister.PropagationPolicies(ns).Get(fmt.Sprintf("p%d", i))
				if err == nil {
					cp := p.DeepCopy()
					cp.Labels["n"] = fmt.Sprint(round)
					if _, err := inProcess.PolicyV1alpha1().PropagationPolicies(ns).Update(ctx, cp, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
						errs <- err
					}
				}
				patch := fmt.Appendf(nil, `{"metadata":{"labels":{"n":"%d"}}}`, round)
				if _, err := inProcess.WorkV1alpha1().Works(ns).Patch(ctx, fmt.Sprintf("w%d", i), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					errs <- err
				}
				// A client that changes what it reads.
				list, err := inProcess.PolicyV1alpha1().PropagationPolicies(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
				if err != nil {
					errs <- err
					continue
				}
				for j := range list.Items {
					list.Items[j].Labels["seen"] = "yes"
				}
				if _, err := overHTTP.PolicyV1alpha1().PropagationPolicies(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"}); err != nil {
					errs <- err
				}
				if _, err := workLister.Works(ns).Get(fmt.Sprintf("w%d", i)); err != nil && !apierrors.IsNotFound(err) {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The informers saw every write.
	deadline := time.Now().Add(30 * time.Second)
	for i := range n {
		for {
			p, _ := policyLister.PropagationPolicies(ns).Get(fmt.Sprintf("p%d", i))
			w, _ := workLister.Works(ns).Get(fmt.Sprintf("w%d", i))
			if p != nil && w != nil && w.Labels["n"] == "10" && p.Labels["seen"] == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("informers after the writes: policy %v, work %v", p, w)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestLocalEtcdServesConsistentReadsFromCache: the storage reaching the
// embedded etcd in process has etcd's answer to progress requests checked,
// as the API server checks each endpoint of a gRPC client, so that the
// watch caches serve consistent reads.
func TestLocalEtcdServesConsistentReadsFromCache(t *testing.T) {
	storageServer(t)
	deadline := time.Now().Add(30 * time.Second)
	for !etcdfeature.DefaultFeatureSupportChecker.Supports(storage.RequestWatchProgress) {
		if time.Now().After(deadline) {
			t.Fatal("RequestWatchProgress is not known to be supported after 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The API server's storage size metric still reads the embedded etcd's
// database size when the registry's storage calls it in process (the
// metric's monitor asks the etcd endpoint over its own connection).
func TestLocalEtcdStorageSizeMetric(t *testing.T) {
	storageServer(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		families, err := legacyregistry.DefaultGatherer.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() != "apiserver_storage_size_bytes" {
				continue
			}
			for _, m := range f.GetMetric() {
				if m.GetGauge().GetValue() > 0 {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("apiserver_storage_size_bytes has no positive sample after 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
