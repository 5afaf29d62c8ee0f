package federatedhpa

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	scalefake "k8s.io/client-go/scale/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	externalmetricsv1beta1 "k8s.io/metrics/pkg/apis/external_metrics/v1beta1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	autoscalinglisters "github.com/flotilla-io/flotilla/apis/generated/listers/autoscaling/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/podautoscaler"
)

// The controller-level fixture: FederatedHPA and binding listers over
// indexers, the fake clientset recording the status patch, a fake scale
// client recording the rescale, a fake metrics source, a fake recorder, a
// fixed clock, a queue recording the delayed adds. The member pods are
// served by a member informer set over fake member clientsets (it has no
// other way in; it lists them as it would a member's API server).

var (
	fixedNow      = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
)

const syncPeriod = 15 * time.Second

// The queue double of every controller test.
type (
	delayedKey     = workertest.Delayed
	recordingQueue = workertest.Queue
)

// fakeMetrics serves pod CPU usage, in millicores, by pod name; each pod
// is marked with the cluster its name says (m1-..., m2-...).
type fakeMetrics struct {
	cpu map[string]int64
	err error
}

func (m *fakeMetrics) PodMetrics(_ context.Context, namespace string, _ labels.Selector) (*metricsv1beta1.PodMetricsList, error) {
	if m.err != nil {
		return nil, m.err
	}
	list := &metricsv1beta1.PodMetricsList{}
	for name, v := range m.cpu {
		list.Items = append(list.Items, metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
				Annotations: map[string]string{autoscalingv1alpha1.QuerySourceAnnotationKey: name[:2]}},
			Timestamp: metav1.NewTime(fixedNow.Add(-10 * time.Second)), Window: metav1.Duration{Duration: 30 * time.Second},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "web", Usage: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(v, resource.DecimalSI)}}},
		})
	}
	return list, nil
}

func (*fakeMetrics) PodsMetric(string, string, labels.Selector, labels.Selector) (*custommetricsv1beta2.MetricValueList, error) {
	return nil, errors.New("not served")
}

func (*fakeMetrics) ObjectMetric(string, string, schema.GroupKind, string, labels.Selector) (*custommetricsv1beta2.MetricValue, error) {
	return nil, errors.New("not served")
}

func (*fakeMetrics) ExternalMetric(string, string, labels.Selector) (*externalmetricsv1beta1.ExternalMetricValueList, error) {
	return nil, errors.New("not served")
}

type fixture struct {
	ctrl     *Controller
	client   *fake.Clientset
	scales   *scalefake.FakeScaleClient
	recorder *record.FakeRecorder
	queue    *recordingQueue
	fhpas    cache.Indexer
}

// in is what a case starts from.
type in struct {
	fhpa *autoscalingv1alpha1.FederatedHPA
	// replicas of the Deployment's scale; -1: no Deployment.
	replicas int32
	// pods by member cluster; a cluster absent is not Ready.
	pods    map[string][]*corev1.Pod
	metrics *fakeMetrics
}

func newFixture(t *testing.T, c in) *fixture {
	t.Helper()
	f := &fixture{fhpas: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		recorder: record.NewFakeRecorder(16)}
	bindings := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}, {Name: "m2", Replicas: 1}}}}
	if err := bindings.Add(rb); err != nil {
		t.Fatal(err)
	}
	var stored []runtime.Object
	if c.fhpa != nil {
		if err := f.fhpas.Add(c.fhpa); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, c.fhpa.DeepCopy())
	}
	f.client = fake.NewSimpleClientset(stored...)

	f.scales = &scalefake.FakeScaleClient{}
	f.scales.AddReactor("get", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if c.replicas < 0 {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web")
		}
		return true, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec: autoscalingv1.ScaleSpec{Replicas: c.replicas}, Status: autoscalingv1.ScaleStatus{Replicas: c.replicas, Selector: "app=web"}}, nil
	})
	f.scales.AddReactor("patch", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, &autoscalingv1.Scale{}, nil
	})
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(deploymentGVK, meta.RESTScopeNamespace)

	q := worker.NewQueue(ControllerName)
	t.Cleanup(q.ShutDown)
	f.queue = &recordingQueue{TypedRateLimitingInterface: q}
	f.ctrl = &Controller{
		opts:  Options{SyncPeriod: syncPeriod, Algorithm: podautoscaler.DefaultConfig()},
		fhpas: autoscalinglisters.NewFederatedHPALister(f.fhpas),
		now:   func() time.Time { return fixedNow },
		queue: f.queue,
	}
	f.ctrl.setReconcilers(worklisters.NewResourceBindingLister(bindings), f.client, f.scales, mapper, members(t, c.pods), c.metrics, f.recorder)
	return f
}

// members runs a member informer set over fake clientsets holding pods
// and waits until it has listed them.
func members(t *testing.T, pods map[string][]*corev1.Pod) *member.Hub {
	t.Helper()
	var clusters []*clusterv1alpha1.Cluster
	clients := map[string]*member.Client{}
	for name, ps := range pods {
		var objs []runtime.Object
		for _, p := range ps {
			objs = append(objs, p)
		}
		clients[name] = &member.Client{Clientset: k8sfake.NewClientset(objs...)}
		clusters = append(clusters, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}}})
	}
	set := member.NewHub(func() ([]*clusterv1alpha1.Cluster, error) { return clusters, nil },
		func(c *clusterv1alpha1.Cluster) (*member.Client, error) { return clients[c.Name], nil })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go set.Run(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for name := range pods {
		for {
			if m, ok := set.Member(name); ok && m.Synced {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %s never listed", name)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return set
}

func fhpa(mods ...func(*autoscalingv1alpha1.FederatedHPA)) *autoscalingv1alpha1.FederatedHPA {
	h := &autoscalingv1alpha1.FederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Generation: 2},
		Spec: autoscalingv1alpha1.FederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
		},
	}
	for _, m := range mods {
		m(h)
	}
	return h
}

// webPod is a Ready pod of web, started long ago, requesting 100m CPU.
func webPod(name string) *corev1.Pod {
	long := metav1.NewTime(fixedNow.Add(-time.Hour))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &long,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: long}}},
	}
}

func onePodEach() map[string][]*corev1.Pod {
	return map[string][]*corev1.Pod{"m1": {webPod("m1-web")}, "m2": {webPod("m2-web")}}
}

func (f *fixture) events() []string { return workertest.Events(f.recorder.Events) }

// statusPatch returns the status the controller patched, nil when it
// made no request; any other request fails the test.
func (f *fixture) statusPatch(t *testing.T) *autoscalingv2.HorizontalPodAutoscalerStatus {
	t.Helper()
	acts := f.client.Actions()
	if len(acts) == 0 {
		return nil
	}
	p, ok := acts[0].(clienttesting.PatchAction)
	if len(acts) != 1 || !ok || p.GetSubresource() != "status" || p.GetName() != "web" || p.GetPatchType() != "application/merge-patch+json" {
		t.Fatalf("requests %v, want one merge patch of federatedhpas/status default/web", acts)
	}
	var body struct {
		Status *autoscalingv2.HorizontalPodAutoscalerStatus `json:"status"`
	}
	if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
		t.Fatal(err)
	}
	return body.Status
}

// rescales are the replicas the scale subresource was patched to.
func (f *fixture) rescales(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, a := range f.scales.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok {
			if p.GetName() != "web" || p.GetNamespace() != "default" || p.GetPatchType() != "application/merge-patch+json" {
				t.Errorf("scale patch of %s/%s type %s", p.GetNamespace(), p.GetName(), p.GetPatchType())
			}
			out = append(out, string(p.GetPatch()))
		}
	}
	return out
}

func condition(s *autoscalingv2.HorizontalPodAutoscalerStatus, typ autoscalingv2.HorizontalPodAutoscalerConditionType) string {
	if s == nil {
		return ""
	}
	for _, c := range s.Conditions {
		if c.Type == typ {
			return string(c.Status) + " " + c.Reason + ": " + c.Message
		}
	}
	return ""
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		in           in
		wantRescales []string
		wantEvents   []string
		// wantDesired is the status' desiredReplicas.
		wantDesired int32
		// wantConditions are conditions of the status, "Status Reason: Message" by type.
		wantConditions map[autoscalingv2.HorizontalPodAutoscalerConditionType]string
	}{
		{
			name:         "usage twice the target: scaled from 2 to 4",
			in:           in{fhpa: fhpa(), replicas: 2, pods: onePodEach(), metrics: &fakeMetrics{cpu: map[string]int64{"m1-web": 100, "m2-web": 100}}},
			wantRescales: []string{`{"spec":{"replicas":4}}`},
			wantEvents:   []string{"Normal SuccessfulRescale New size: 4; reason: cpu resource utilization (percentage of request) above target"},
			wantDesired:  4,
			wantConditions: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{
				autoscalingv2.AbleToScale: "True SucceededRescale: the HPA controller was able to update the target scale to 4",
			},
		},
		{
			name:        "usage at the target: no rescale",
			in:          in{fhpa: fhpa(), replicas: 2, pods: onePodEach(), metrics: &fakeMetrics{cpu: map[string]int64{"m1-web": 50, "m2-web": 50}}},
			wantDesired: 2,
			wantConditions: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{
				autoscalingv2.AbleToScale:   "True ReadyForNewScale: recommended size matches current size",
				autoscalingv2.ScalingActive: "True ValidMetricFound: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)",
			},
		},
		{
			name: "m2 not Ready: computed on m1, m2 named missing",
			in: in{fhpa: fhpa(), replicas: 2, pods: map[string][]*corev1.Pod{"m1": {webPod("m1-web")}},
				metrics: &fakeMetrics{cpu: map[string]int64{"m1-web": 50}}},
			wantDesired: 2,
			wantConditions: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{
				autoscalingv2.ScalingActive: "True ValidMetricFound: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)" +
					"; metrics of clusters m2 are missing, computed on the other clusters",
			},
		},
		{
			name:       "no scale target: FailedGetScale",
			in:         in{fhpa: fhpa(), replicas: -1, pods: onePodEach(), metrics: &fakeMetrics{}},
			wantEvents: []string{`Warning FailedGetScale unable to get scale for target Deployment default/web: deployments.apps "web" not found`},
			wantConditions: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{
				autoscalingv2.AbleToScale: `False FailedGetScale: the HPA controller was unable to get the target's current scale: unable to get scale for target Deployment default/web: deployments.apps "web" not found`,
			},
		},
		{
			name: "metrics unavailable: FailedGetResourceMetric, no rescale",
			in:   in{fhpa: fhpa(), replicas: 2, pods: onePodEach(), metrics: &fakeMetrics{err: errors.New("metrics down")}},
			wantEvents: []string{"Warning FailedGetResourceMetric failed to get cpu utilization: unable to get metrics for resource cpu: metrics down",
				"Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: " +
					"failed to get cpu utilization: unable to get metrics for resource cpu: metrics down"},
			wantConditions: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{
				autoscalingv2.ScalingActive: "False FailedGetResourceMetric: the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: metrics down",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.in)
			if err := f.ctrl.reconcile(context.Background(), "default/web"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantRescales, f.rescales(t)); diff != "" {
				t.Errorf("rescales (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			status := f.statusPatch(t)
			if status == nil {
				t.Fatal("no status written")
			}
			if status.ObservedGeneration == nil || *status.ObservedGeneration != 2 || status.DesiredReplicas != tc.wantDesired {
				t.Errorf("observedGeneration %v desiredReplicas %d, want 2 and %d", status.ObservedGeneration, status.DesiredReplicas, tc.wantDesired)
			}
			for typ, want := range tc.wantConditions {
				if got := condition(status, typ); got != want {
					t.Errorf("%s condition:\n got %s\nwant %s", typ, got, want)
				}
			}
			if diff := cmp.Diff([]delayedKey{{Key: "default/web", Delay: syncPeriod}}, f.queue.Delayed()); diff != "" {
				t.Errorf("requeues (-want +got):\n%s", diff)
			}

			// The informer delivers the status: the next sync, with the
			// same readings and nothing rescaled, writes nothing.
			if len(tc.wantRescales) > 0 {
				return
			}
			stored := tc.in.fhpa.DeepCopy()
			stored.Status = *status
			if err := f.fhpas.Update(stored); err != nil {
				t.Fatal(err)
			}
			f.client.ClearActions()
			f.scales.ClearActions()
			if err := f.ctrl.reconcile(context.Background(), "default/web"); err != nil {
				t.Fatal(err)
			}
			if s := f.statusPatch(t); s != nil {
				t.Errorf("second sync wrote status %+v", s)
			}
			if r := f.rescales(t); len(r) != 0 {
				t.Errorf("second sync rescaled %v", r)
			}
		})
	}
}

// A FederatedHPA gone is forgotten: no request, no requeue, its history
// dropped.
func TestReconcileGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, in{pods: onePodEach(), metrics: &fakeMetrics{}})
	f.ctrl.recommend.histories["default/web"] = &podautoscaler.History{}
	f.ctrl.recommend.selectors["default/web"] = labels.Everything()
	if err := f.ctrl.reconcile(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.client.Actions()) + len(f.scales.Actions()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
	if d := f.queue.Delayed(); len(d) != 0 {
		t.Errorf("requeued %v", d)
	}
	if len(f.ctrl.recommend.histories)+len(f.ctrl.recommend.selectors) != 0 {
		t.Errorf("kept histories %v selectors %v", f.ctrl.recommend.histories, f.ctrl.recommend.selectors)
	}
}
