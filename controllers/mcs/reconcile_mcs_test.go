package mcs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
)

// mcsCluster is a member serving discovery.k8s.io/v1 endpointslices when
// endpointSlices is set (as member.Serves reads status.apiEnablements).
func mcsCluster(name string, ready, endpointSlices bool) *clusterv1alpha1.Cluster {
	c := testCluster(name, ready)
	c.Status.APIEnablements = []clusterv1alpha1.APIEnablement{{GroupVersion: "v1",
		Resources: []clusterv1alpha1.APIResource{{Name: "services", Kind: "Service"}}}}
	if endpointSlices {
		c.Status.APIEnablements = append(c.Status.APIEnablements, clusterv1alpha1.APIEnablement{GroupVersion: "discovery.k8s.io/v1",
			Resources: []clusterv1alpha1.APIResource{{Name: "endpointslices", Kind: "EndpointSlice"}}})
	}
	return c
}

// mcsWorld is what the serviceReconciler reads.
type mcsWorld struct {
	m         *networkingv1alpha1.MultiClusterService
	clusters  []*clusterv1alpha1.Cluster
	svc       *corev1.Service
	rb        *workv1alpha2.ResourceBinding
	works     []*workv1alpha1.Work
	failWorks error
	failClaim error
}

// mcsRun is what a reconcile did: log holds every write in order.
type mcsRun struct {
	mu     sync.Mutex
	log    []string
	bound  *workv1alpha2.ResourceBinding
	conds  []metav1.Condition
	events []string
}

func (r *mcsRun) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func runMCS(t *testing.T, w mcsWorld) (*mcsRun, error) {
	t.Helper()
	rec := newRecorder(w.works...)
	rec.failAll = w.failWorks
	inner := rec.writer()
	run := &mcsRun{}
	// rv is the MultiClusterService's resourceVersion on the server: the
	// finalizer and status patches carry the one they were given, and
	// fail with a conflict when it is stale.
	var rv int
	if w.m != nil {
		rv, _ = strconv.Atoi(w.m.ResourceVersion)
	}
	fresh := func(m *networkingv1alpha1.MultiClusterService, op string) error {
		if m.ResourceVersion != strconv.Itoa(rv) {
			run.add("stale " + op)
			return apierrors.NewConflict(schema.GroupResource{Group: "networking.karmada.io", Resource: "multiclusterservices"}, m.Name, errors.New("stale"))
		}
		rv++
		return nil
	}
	isM := func(m *networkingv1alpha1.MultiClusterService) {
		t.Helper()
		if m == nil || w.m == nil || m.Namespace != w.m.Namespace || m.Name != w.m.Name {
			t.Errorf("called with MultiClusterService %v", m)
		}
	}
	r := serviceReconciler{
		mcs: func(namespace, name string) (*networkingv1alpha1.MultiClusterService, error) {
			if namespace != "ns" || name != "web" {
				t.Errorf("mcs(%s, %s)", namespace, name)
			}
			return w.m, nil
		},
		clusters: func() ([]*clusterv1alpha1.Cluster, error) { return w.clusters, nil },
		service: func(namespace, name string) (*corev1.Service, error) {
			if namespace != "ns" || name != "web" {
				t.Errorf("service(%s, %s)", namespace, name)
			}
			return w.svc, nil
		},
		binding: func(namespace, name string) (*workv1alpha2.ResourceBinding, error) {
			if namespace != "ns" || name != "web-service" {
				t.Errorf("binding(%s, %s)", namespace, name)
			}
			return w.rb, nil
		},
		works: rec.byService,
		work:  rec.byName,
		write: worksWriter{
			create: func(ctx context.Context, wk *workv1alpha1.Work) error {
				err := inner.create(ctx, wk)
				if err == nil {
					run.add("create " + wk.Namespace + "/" + wk.Name)
				}
				return err
			},
			patch: func(ctx context.Context, namespace, name string, p []byte) error {
				err := inner.patch(ctx, namespace, name, p)
				if err == nil {
					run.add("patch " + namespace + "/" + name)
				}
				return err
			},
			delete: func(ctx context.Context, wk *workv1alpha1.Work) error {
				err := inner.delete(ctx, wk)
				if err == nil {
					run.add("delete " + wk.Namespace + "/" + wk.Name)
				}
				return err
			},
		},
		claim: func(_ context.Context, svc *corev1.Service, m *networkingv1alpha1.MultiClusterService) error {
			if svc != w.svc {
				t.Errorf("claim of another Service %v", svc)
			}
			if w.failClaim != nil {
				return w.failClaim
			}
			if m == nil {
				run.add("unclaim")
				return nil
			}
			isM(m)
			run.add("claim")
			return nil
		},
		bind: func(_ context.Context, existing, desired *workv1alpha2.ResourceBinding) error {
			if existing != w.rb {
				t.Errorf("bind given existing %v, want the stored binding", existing)
			}
			run.bound = desired
			if existing == nil {
				run.add("bind create")
			} else {
				run.add("bind patch")
			}
			return nil
		},
		release: func(_ context.Context, rb *workv1alpha2.ResourceBinding) error {
			if rb != w.rb {
				t.Errorf("release of another binding %v", rb)
			}
			run.add("release")
			return nil
		},
		finalize: func(_ context.Context, m *networkingv1alpha1.MultiClusterService, add bool) error {
			isM(m)
			if err := fresh(m, "finalize"); err != nil {
				return err
			}
			if add {
				run.add("finalize add")
			} else {
				run.add("finalize remove")
			}
			return nil
		},
		status: func(_ context.Context, m *networkingv1alpha1.MultiClusterService, conditions []metav1.Condition) error {
			isM(m)
			if err := fresh(m, "status"); err != nil {
				return err
			}
			run.conds = conditions
			run.add("status")
			return nil
		},
		event: func(m *networkingv1alpha1.MultiClusterService, eventType, reason, message string) {
			isM(m)
			run.events = append(run.events, eventType+" "+reason+": "+message)
		},
	}
	err := r.reconcile(context.Background(), "ns", "web")
	return run, err
}

func key(w *workv1alpha1.Work) string { return w.Namespace + "/" + w.Name }

func conditions(applied, dispatched metav1.Condition) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range []metav1.Condition{applied, dispatched} {
		if c.Type != "" {
			c.ObservedGeneration = 2
			out = append(out, c)
		}
	}
	return out
}

var (
	appliedTrue = metav1.Condition{Type: networkingv1alpha1.MCSServiceAppliedConditionType, Status: metav1.ConditionTrue,
		Reason: "ServiceAppliedSucceed", Message: "Service is propagated to target clusters."}
	dispatchedTrue = metav1.Condition{Type: networkingv1alpha1.EndpointSliceDispatchedConditionType, Status: metav1.ConditionTrue,
		Reason: "EndpointSliceDispatchedSucceed", Message: "EndpointSlice are dispatched successfully"}
	eventApplied    = "Normal SyncServiceSucceed: Service is propagated to target clusters."
	eventDispatched = "Normal DispatchEndpointSliceSucceed: EndpointSlice are dispatched successfully"
)

func appliedFalse(msg string) metav1.Condition {
	return metav1.Condition{Type: networkingv1alpha1.MCSServiceAppliedConditionType, Status: metav1.ConditionFalse,
		Reason: "ServiceAppliedFailed", Message: msg}
}

func dispatchedFalse(msg string) metav1.Condition {
	return metav1.Condition{Type: networkingv1alpha1.EndpointSliceDispatchedConditionType, Status: metav1.ConditionFalse,
		Reason: "EndpointSliceDispatchedFailed", Message: msg}
}

func TestServiceReconcile(t *testing.T) {
	t.Parallel()
	// member1 provides web-a, member2 provides web-b; member3 consumes.
	collect := func(cluster, slice, ip string, managers ...string) (*workv1alpha1.Work, plan.Collected) {
		w, err := plan.CollectedWork(cluster, memberSlice(slice, "web", ip), managers...)
		if err != nil {
			t.Fatal(err)
		}
		s := asStored(t, w)
		c, ok := plan.CollectedFrom(s, managers[0])
		if !ok {
			t.Fatalf("%s not collected", s.Name)
		}
		return s, c
	}
	mcsManaged := networkingv1alpha1.ManagedByMultiClusterService
	fromA, a := collect("member1", "web-a", "10.0.1.1", mcsManaged)
	fromB, b := collect("member2", "web-b", "10.0.2.1", networkingv1alpha1.ManagedByServiceExport, mcsManaged)
	exportedOnly, _ := collect("member3", "web-c", "10.0.3.1", networkingv1alpha1.ManagedByServiceExport)
	dispatched := func(consumer string, from ...plan.Collected) []*workv1alpha1.Work {
		ws, err := plan.DispatchWorks(consumer, "ns", "web", from)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	aTo2 := dispatched("member2", a)[0]
	aTo3, bTo3 := dispatched("member3", a, b)[0], dispatched("member3", a, b)[1]
	bTo1 := dispatched("member1", b)[0]
	storedATo2 := asStored(t, aTo2)
	// A Work member2 imports through a ServiceImport: not the
	// MultiClusterService's.
	imported, err := plan.ImportWorks("member2", plan.ServiceImport{Namespace: "ns", Name: "web", Type: "Headless"}, []plan.Collected{a})
	if err != nil || len(imported) != 1 {
		t.Fatalf("ImportWorks: %v, %v", imported, err)
	}
	storedImported := asStored(t, imported[0])

	newMCS := func() *networkingv1alpha1.MultiClusterService {
		return &networkingv1alpha1.MultiClusterService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Generation: 2, UID: "mcs-uid", ResourceVersion: "1",
				Labels:     map[string]string{networkingv1alpha1.MultiClusterServicePermanentIDLabel: "pid-1"},
				Finalizers: []string{networkingv1alpha1.MultiClusterServiceControllerFinalizer}},
			Spec: networkingv1alpha1.MultiClusterServiceSpec{Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster},
				ProviderClusters: []networkingv1alpha1.ClusterSelector{{Name: "member1"}},
				ConsumerClusters: []networkingv1alpha1.ClusterSelector{{Name: "member2"}}},
		}
	}
	claimedSvc := func(pid string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "svc-uid", ResourceVersion: "10",
			Labels: map[string]string{workv1alpha2.ResourceTemplateClaimedByLabel: "MultiClusterService",
				networkingv1alpha1.MultiClusterServicePermanentIDLabel: pid},
			Annotations: map[string]string{networkingv1alpha1.MultiClusterServiceNameAnnotation: "web",
				networkingv1alpha1.MultiClusterServiceNamespaceAnnotation: "ns"}}}
	}
	bindingOf := func(clusters ...string) *workv1alpha2.ResourceBinding {
		b := plan.BindService(newMCS(), "svc-uid", "10", clusters)
		rb := &workv1alpha2.ResourceBinding{Spec: b.Spec}
		rb.Namespace, rb.Name, rb.Labels, rb.Annotations = "ns", "web-service", b.Labels, b.Annotations
		rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1"}} // the scheduler's: not the MultiClusterService's
		return rb
	}
	clusters := func() []*clusterv1alpha1.Cluster {
		return []*clusterv1alpha1.Cluster{mcsCluster("member1", true, true), mcsCluster("member2", true, true), mcsCluster("member3", true, true)}
	}
	// settled is the world as the MultiClusterService wants it: member1
	// provides to member2, its conditions True.
	settled := func() mcsWorld {
		m := newMCS()
		m.Status.Conditions = conditions(appliedTrue, dispatchedTrue)
		return mcsWorld{m: m, clusters: clusters(), svc: claimedSvc("pid-1"), rb: bindingOf("member1", "member2"),
			works: []*workv1alpha1.Work{fromA, fromB, storedATo2, storedImported}}
	}
	// withdrawn is a world where m is to withdraw everything.
	withdrawn := func(m *networkingv1alpha1.MultiClusterService) mcsWorld {
		w := settled()
		w.m = m
		return w
	}
	deleting := newMCS()
	deleting.DeletionTimestamp = &metav1.Time{}
	loadBalancer := newMCS()
	loadBalancer.Spec.Types = []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer}
	loadBalancerNoFinalizer := loadBalancer.DeepCopy()
	loadBalancerNoFinalizer.Finalizers = []string{"other"}

	for _, tc := range []struct {
		name  string
		world mcsWorld
		// log is every write, in order.
		log []string
		// conds are the conditions written (nil: no status write).
		conds  []metav1.Condition
		events []string
		// placement is the binding's clusters written.
		placement []string
		err       error
	}{
		{name: "MultiClusterService missing: dispatched Works deleted, nothing else", world: withdrawn(nil),
			log: []string{"delete " + key(storedATo2)}},
		{name: "being deleted: Works deleted, Service unclaimed, binding released, finalizer removed last", world: withdrawn(deleting),
			log: []string{"delete " + key(storedATo2), "unclaim", "release", "finalize remove"}},
		{name: "not CrossCluster: withdrawn", world: withdrawn(loadBalancer),
			log: []string{"delete " + key(storedATo2), "unclaim", "release", "finalize remove"}},
		{name: "withdrawn, the Service claimed by another MultiClusterService and the binding by a policy: left", world: func() mcsWorld {
			w := withdrawn(deleting)
			w.svc = claimedSvc("pid-other")
			w.rb.Labels = map[string]string{"propagationpolicy.karmada.io/permanent-id": "pp"}
			return w
		}(), log: []string{"delete " + key(storedATo2), "finalize remove"}},
		{name: "withdrawn, no Service, no binding, no finalizer", world: func() mcsWorld {
			w := withdrawn(loadBalancerNoFinalizer)
			w.svc, w.rb = nil, nil
			return w
		}(), log: []string{"delete " + key(storedATo2)}},
		{name: "withdrawing fails: the finalizer stays", world: func() mcsWorld {
			w := withdrawn(deleting)
			w.failClaim = errBoom
			return w
		}(), log: []string{"delete " + key(storedATo2)}, err: errBoom},
		{name: "settled: no write, no event", world: settled()},
		{name: "no finalizer yet: added first", world: func() mcsWorld {
			w := settled()
			w.m.Finalizers = nil
			return w
		}(), log: []string{"finalize add"}},
		{name: "a new generation: conditions written again, with events", world: func() mcsWorld {
			w := settled()
			w.m.Generation = 3
			return w
		}(), log: []string{"status"}, events: []string{eventApplied, eventDispatched}},
		{name: "Service missing: ServiceApplied False, no binding written", world: func() mcsWorld {
			w := settled()
			w.svc = nil
			return w
		}(), log: []string{"status"}, conds: conditions(appliedFalse("Service ns/web is not found"), dispatchedTrue),
			events: []string{"Warning SyncServiceFailed: Service ns/web is not found"}},
		{name: "Service unclaimed: claimed, binding created on the providers and consumers", world: func() mcsWorld {
			w := settled()
			w.m.Status.Conditions = nil
			w.svc.Labels, w.svc.Annotations = nil, nil
			w.rb = nil
			return w
		}(), log: []string{"claim", "bind create", "status"}, conds: conditions(appliedTrue, dispatchedTrue),
			events: []string{eventApplied, eventDispatched}, placement: []string{"member1", "member2"}},
		{name: "Service claimed without the name annotation: claimed again", world: func() mcsWorld {
			w := settled()
			w.svc.Annotations = nil
			return w
		}(), log: []string{"claim"}},
		{name: "a new resourceVersion of the Service alone: no write", world: func() mcsWorld {
			w := settled()
			w.svc.ResourceVersion = "11"
			return w
		}()},
		{name: "Service made again (another uid): binding patched", world: func() mcsWorld {
			w := settled()
			w.svc.UID = "svc-uid-2"
			return w
		}(), log: []string{"bind patch"}, placement: []string{"member1", "member2"}},
		{name: "binding claimed by a policy: patched", world: func() mcsWorld {
			w := settled()
			w.rb.Labels["propagationpolicy.karmada.io/permanent-id"] = "pp"
			return w
		}(), log: []string{"bind patch"}, placement: []string{"member1", "member2"}},
		{name: "all clusters: placed on every known one, each consumer given the others' endpoints", world: func() mcsWorld {
			w := settled()
			w.m.Spec.ProviderClusters, w.m.Spec.ConsumerClusters = nil, nil
			w.works = append(w.works, exportedOnly)
			return w
		}(), log: []string{"bind patch", "create " + key(bTo1), "create " + key(aTo3), "create " + key(bTo3)},
			placement: []string{"member1", "member2", "member3"}},
		{name: "consumer changed: the new one given the endpoints, the old one's taken", world: func() mcsWorld {
			w := settled()
			w.m.Spec.ConsumerClusters = []networkingv1alpha1.ClusterSelector{{Name: "member3"}}
			return w
		}(), log: []string{"bind patch", "create " + key(aTo3), "delete " + key(storedATo2)}, placement: []string{"member1", "member3"}},
		{name: "unknown consumer: both conditions False, ClusterNotFound", world: func() mcsWorld {
			w := settled()
			w.m.Spec.ConsumerClusters = append(w.m.Spec.ConsumerClusters, networkingv1alpha1.ClusterSelector{Name: "member9"})
			return w
		}(), log: []string{"status"},
			conds: conditions(appliedFalse("Consumer cluster member9 is not found"), dispatchedFalse("Consumer cluster member9 is not found")),
			events: []string{"Warning SyncServiceFailed: Consumer cluster member9 is not found",
				"Warning DispatchEndpointSliceFailed: Consumer cluster member9 is not found",
				"Warning ClusterNotFound: Consumer cluster member9 is not found"}},
		{name: "unknown provider: ServiceApplied False", world: func() mcsWorld {
			w := settled()
			w.m.Spec.ProviderClusters = append(w.m.Spec.ProviderClusters, networkingv1alpha1.ClusterSelector{Name: "member8"})
			return w
		}(), log: []string{"status"}, conds: conditions(appliedFalse("Provider cluster member8 is not found"), dispatchedTrue),
			events: []string{"Warning SyncServiceFailed: Provider cluster member8 is not found",
				"Warning ClusterNotFound: Provider cluster member8 is not found"}},
		{name: "Service missing and a consumer unknown: both said", world: func() mcsWorld {
			w := settled()
			w.svc = nil
			w.m.Spec.ConsumerClusters = append(w.m.Spec.ConsumerClusters, networkingv1alpha1.ClusterSelector{Name: "member9"})
			return w
		}(), log: []string{"status"},
			conds: conditions(appliedFalse("Service ns/web is not found; Consumer cluster member9 is not found"),
				dispatchedFalse("Consumer cluster member9 is not found")),
			events: []string{"Warning SyncServiceFailed: Service ns/web is not found; Consumer cluster member9 is not found",
				"Warning DispatchEndpointSliceFailed: Consumer cluster member9 is not found",
				"Warning ClusterNotFound: Consumer cluster member9 is not found"}},
		{name: "a consumer leaving is not known", world: func() mcsWorld {
			w := settled()
			w.clusters[1].DeletionTimestamp = &metav1.Time{}
			return w
		}(), log: []string{"bind patch", "delete " + key(storedATo2), "status"},
			conds: conditions(appliedFalse("Consumer cluster member2 is not found"), dispatchedFalse("Consumer cluster member2 is not found")),
			events: []string{"Warning SyncServiceFailed: Consumer cluster member2 is not found",
				"Warning DispatchEndpointSliceFailed: Consumer cluster member2 is not found",
				"Warning ClusterNotFound: Consumer cluster member2 is not found"}, placement: []string{"member1"}},
		{name: "consumer not Ready: its dispatched Works kept", world: func() mcsWorld {
			w := settled()
			w.clusters[1] = mcsCluster("member2", false, true)
			w.works = []*workv1alpha1.Work{fromA, storedATo2, asStored(t, dispatched("member2", plan.Collected{Cluster: "member1",
				Slice: memberSlice("web-gone", "web", "10.0.1.9")})[0])}
			return w
		}()},
		{name: "consumer not Ready: nothing dispatched to it yet", world: func() mcsWorld {
			w := settled()
			w.clusters[1] = mcsCluster("member2", false, true)
			w.works = []*workv1alpha1.Work{fromA}
			return w
		}()},
		{name: "consumer without discovery.k8s.io/v1 endpointslices: APIIncompatible", world: func() mcsWorld {
			w := settled()
			w.clusters[1] = mcsCluster("member2", true, false)
			w.clusters[1].Status.APIEnablements = append(w.clusters[1].Status.APIEnablements, clusterv1alpha1.APIEnablement{
				GroupVersion: "discovery.k8s.io/v1beta1", Resources: []clusterv1alpha1.APIResource{{Name: "endpointslices", Kind: "EndpointSlice"}}})
			return w
		}(), log: []string{"delete " + key(storedATo2), "status"},
			conds: conditions(appliedTrue, dispatchedFalse("Consumer cluster member2 does not support EndpointSlice")),
			events: []string{"Warning DispatchEndpointSliceFailed: Consumer cluster member2 does not support EndpointSlice",
				"Warning APIIncompatible: Consumer cluster member2 does not support EndpointSlice"}},
		{name: "endpoints moved: the consumer's Work patched, no event", world: func() mcsWorld {
			w := settled()
			moved := memberSlice("web-a", "web", "10.0.1.7")
			cw, err := plan.CollectedWork("member1", moved, mcsManaged)
			if err != nil {
				t.Fatal(err)
			}
			w.works[0] = asStored(t, cw)
			return w
		}(), log: []string{"patch " + key(storedATo2)}},
		{name: "a provider's slice gone: the consumer's Work deleted", world: func() mcsWorld {
			w := settled()
			w.works = []*workv1alpha1.Work{fromB, storedATo2}
			return w
		}(), log: []string{"delete " + key(storedATo2)}},
		{name: "Work writes fail: EndpointSliceDispatched False, error returned", world: func() mcsWorld {
			w := settled()
			w.works = []*workv1alpha1.Work{fromA}
			w.failWorks = errBoom
			return w
		}(), log: []string{"status"},
			conds:  conditions(appliedTrue, dispatchedFalse(fmt.Sprintf("creating Work %s: boom", key(aTo2)))),
			events: []string{fmt.Sprintf("Warning DispatchEndpointSliceFailed: creating Work %s: boom", key(aTo2))}, err: errBoom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run, err := runMCS(t, tc.world)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Errorf("err %v, want %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.log, run.log, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			wantConds := tc.conds
			if wantConds == nil && slices.Contains(tc.log, "status") {
				wantConds = tc.world.m.Status.Conditions
				for i := range wantConds {
					wantConds[i].ObservedGeneration = tc.world.m.Generation
				}
			}
			if diff := cmp.Diff(wantConds, run.conds, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.events, run.events, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tc.placement != nil {
				if run.bound == nil {
					t.Fatal("no binding written")
				}
				b := run.bound
				if got := b.Spec.Placement.ClusterAffinity.ClusterNames; !slices.Equal(got, tc.placement) {
					t.Errorf("placement %v, want %v", got, tc.placement)
				}
				if b.Namespace != "ns" || b.Name != "web-service" || b.Labels[workv1alpha2.BindingManagedByLabel] != "MultiClusterService" ||
					b.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] != "pid-1" ||
					b.Spec.Resource.UID != tc.world.svc.UID || b.Spec.Resource.ResourceVersion != tc.world.svc.ResourceVersion {
					t.Errorf("binding %s/%s labels %v resource %+v", b.Namespace, b.Name, b.Labels, b.Spec.Resource)
				}
			}
			// Every Work written is the MultiClusterService's, and never a
			// collected or imported one.
			for _, l := range run.log {
				if _, k, ok := strings.Cut(l, " "); ok && (k == key(fromA) || k == key(fromB) || k == key(storedImported) || k == key(exportedOnly)) {
					t.Errorf("%s: not the MultiClusterService's to write", l)
				}
			}
		})
	}
}

// The first reconcile of a MultiClusterService adds the finalizer, which
// changes its resourceVersion: no later write of the same reconcile may
// carry the one read before (the server refuses it with a conflict).
func TestServiceReconcileFirstTime(t *testing.T) {
	t.Parallel()
	w, err := plan.CollectedWork("member1", memberSlice("web-a", "web", "10.0.1.1"), networkingv1alpha1.ManagedByMultiClusterService)
	if err != nil {
		t.Fatal(err)
	}
	m := &networkingv1alpha1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Generation: 1, ResourceVersion: "1",
			Labels: map[string]string{networkingv1alpha1.MultiClusterServicePermanentIDLabel: "pid-1"}},
		Spec: networkingv1alpha1.MultiClusterServiceSpec{Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster}},
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "svc-uid", ResourceVersion: "10"}}
	run, err := runMCS(t, mcsWorld{m: m, svc: svc, works: []*workv1alpha1.Work{asStored(t, w)},
		clusters: []*clusterv1alpha1.Cluster{mcsCluster("member1", true, true), mcsCluster("member2", true, true)}})
	if err != nil {
		t.Errorf("reconcile: %v", err)
	}
	if len(run.log) == 0 || run.log[0] != "finalize add" {
		t.Errorf("writes %v: the finalizer first", run.log)
	}
	for _, l := range run.log {
		if strings.HasPrefix(l, "stale") {
			t.Errorf("writes %v: a write with the resourceVersion read before the finalizer was added", run.log)
		}
	}
}
