package rollout

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	flotillalisters "github.com/flotilla-io/flotilla/apis/generated/listers/flotilla/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	workv1alpha1listers "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/rolloutplan"
)

var (
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	t0            = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
)

type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

const bindingName = "nginx-deployment"

// nginx is the Deployment default/nginx claimed by PropagationPolicy
// default/nginx, with image.
func nginx(image string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	_ = u.UnmarshalJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx","namespace":"default","uid":"u1",
	"resourceVersion":"7","generation":3,"annotations":{"propagationpolicy.karmada.io/name":"nginx","propagationpolicy.karmada.io/namespace":"default"}},
	"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"nginx","image":"` + image + `"}]}}}}`))
	return u
}

func readyCluster(name string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1alpha1.ClusterStatus{
		Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}}}
}

func rb(revisions string) *workv1alpha2.ResourceBinding {
	b := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: bindingName, ResourceVersion: "5"}}
	b.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx", UID: "u1"}
	b.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "a"}, {Name: "b"}}
	if revisions != "" {
		b.Annotations = map[string]string{flotillav1alpha1.RevisionsAnnotation: revisions}
	}
	return b
}

func policy(strategy string) *policyv1alpha1.PropagationPolicy {
	p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx"}}
	if strategy != "" {
		p.Annotations = map[string]string{flotillav1alpha1.RolloutStrategyAnnotation: strategy}
	}
	return p
}

func strategy() *flotillav1alpha1.RolloutStrategy {
	stage := func(name, cluster string) flotillav1alpha1.RolloutStage {
		return flotillav1alpha1.RolloutStage{Name: name, Clusters: flotillav1alpha1.StageClusters{Names: []string{cluster}},
			SoakTime: &metav1.Duration{}, ProgressDeadline: &metav1.Duration{Duration: 10 * time.Minute}}
	}
	return &flotillav1alpha1.RolloutStrategy{ObjectMeta: metav1.ObjectMeta{Name: "two"},
		Spec: flotillav1alpha1.RolloutStrategySpec{Stages: []flotillav1alpha1.RolloutStage{stage("s1", "a"), stage("s2", "b")}}}
}

func revision(template *unstructured.Unstructured, number int64) *flotillav1alpha1.ResourceRevision {
	raw, _ := json.Marshal(rolloutplan.Content(template))
	h := rolloutplan.Hash(template)
	return &flotillav1alpha1.ResourceRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: names.RevisionName(bindingName, h), ResourceVersion: "1",
			Labels: map[string]string{flotillav1alpha1.BindingLabel: bindingName}},
		Resource: resourceOf(template), Binding: bindingName, Revision: number, Hash: h, Template: runtime.RawExtension{Raw: raw},
	}
}

func runOf(to *flotillav1alpha1.ResourceRevision, phase flotillav1alpha1.RolloutPhase) *flotillav1alpha1.RolloutRun {
	return &flotillav1alpha1.RolloutRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: names.RolloutRunName(bindingName, to.Revision), ResourceVersion: "1", Generation: 1},
		Spec:       flotillav1alpha1.RolloutRunSpec{Resource: to.Resource, Binding: bindingName, Strategy: "two", ToRevision: to.Name},
		Status:     flotillav1alpha1.RolloutRunStatus{Phase: phase},
	}
}

// inStage is the strategy holding clusters new to the placement in their
// stage.
func inStage() *flotillav1alpha1.RolloutStrategy {
	s := strategy()
	s.Spec.NewClusters = flotillav1alpha1.NewClustersInStage
	return s
}

type objects struct {
	strategy  *flotillav1alpha1.RolloutStrategy
	template  *unstructured.Unstructured
	binding   *workv1alpha2.ResourceBinding
	policy    *policyv1alpha1.PropagationPolicy
	revisions []*flotillav1alpha1.ResourceRevision
	runs      []*flotillav1alpha1.RolloutRun
}

func (in objects) strategyOrDefault() *flotillav1alpha1.RolloutStrategy {
	if in.strategy != nil {
		return in.strategy.DeepCopy()
	}
	return strategy()
}

func newController(t *testing.T, in objects) (*Controller, *fake.Clientset) {
	t.Helper()
	idx := func(indexers cache.Indexers) cache.Indexer {
		all := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
		for k, v := range indexers {
			all[k] = v
		}
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, all)
	}
	add := func(i cache.Indexer, obj any) {
		if err := i.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	byBindingIndex := cache.Indexers{byBinding: indexByBinding}
	rbs, clusters, pps, strategies := idx(nil), idx(nil), idx(nil), idx(nil)
	revisions, runs := idx(byBindingIndex), idx(byBindingIndex)
	var stored []runtime.Object
	if in.binding != nil {
		add(rbs, in.binding)
		stored = append(stored, in.binding.DeepCopy())
	}
	add(pps, in.policy)
	add(strategies, in.strategyOrDefault())
	stored = append(stored, in.strategyOrDefault())
	add(clusters, readyCluster("a"))
	add(clusters, readyCluster("b"))
	for _, r := range in.revisions {
		add(revisions, r)
		stored = append(stored, r.DeepCopy())
	}
	for _, r := range in.runs {
		add(runs, r)
		stored = append(stored, r.DeepCopy())
	}
	client := fake.NewSimpleClientset(stored...)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(deploymentGVK, meta.RESTScopeNamespace)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{deploymentGVR: "DeploymentList"}, in.template)
	tmpl := templates.New(dyn, resettable{mapper})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if missing := tmpl.Ensure(ctx, map[schema.GroupVersionKind]bool{deploymentGVK: true}); len(missing) > 0 {
		t.Fatalf("kinds not mapped: %v", missing)
	}
	c := &Controller{
		templates: tmpl, rbs: worklisters.NewResourceBindingLister(rbs), crbs: worklisters.NewClusterResourceBindingLister(idx(nil)),
		works: workv1alpha1listers.NewWorkLister(idx(nil)), clusters: clusterlisters.NewClusterLister(clusters),
		pps: policylisters.NewPropagationPolicyLister(pps), cpps: policylisters.NewClusterPropagationPolicyLister(idx(nil)),
		strategies: flotillalisters.NewRolloutStrategyLister(strategies), revisions: revisions, runs: runs,
		client: client, recorder: record.NewFakeRecorder(64),
		queue: &workertest.Queue{TypedRateLimitingInterface: worker.NewQueue("test")}, now: func() time.Time { return t0 },
	}
	return c, client
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	v1, v2 := nginx("nginx:1"), nginx("nginx:2")
	h1, h2 := rolloutplan.Hash(v1), rolloutplan.Hash(v2)
	rev1, rev2 := revision(v1, 1), revision(v2, 2)
	rbPath := "default/" + bindingName
	tests := []struct {
		name string
		in   objects
		// wantWrites are "verb resource namespace/name", sorted.
		wantWrites []string
		// wantRevisions is the revisions annotation patched ("null" when
		// removed, "" when not patched).
		wantRevisions string
		// check looks at the objects written.
		check func(t *testing.T, client *fake.Clientset)
	}{{
		name: "no strategy: nothing",
		in:   objects{template: v1, binding: rb(""), policy: policy("")},
	}, {
		name:          "first time under a strategy: the template kept as a revision, every cluster held at it",
		in:            objects{template: v1, binding: rb(""), policy: policy("two")},
		wantWrites:    []string{"create resourcerevisions default/" + rev1.Name, "patch resourcebindings " + rbPath},
		wantRevisions: "a=" + h1 + ",b=" + h1,
	}, {
		name: "held and unchanged: nothing",
		in:   objects{template: v1, binding: rb("a=" + h1 + ",b=" + h1), policy: policy("two"), revisions: []*flotillav1alpha1.ResourceRevision{rev1}},
	}, {
		name:       "the template changed: its revision kept as number 2 and a run started from the old one",
		in:         objects{template: v2, binding: rb("a=" + h1 + ",b=" + h1), policy: policy("two"), revisions: []*flotillav1alpha1.ResourceRevision{rev1}},
		wantWrites: []string{"create resourcerevisions default/" + rev2.Name, "create rolloutruns default/" + bindingName + "-2"},
		check: func(t *testing.T, client *fake.Clientset) {
			run, err := client.FlotillaV1alpha1().RolloutRuns("default").Get(context.Background(), bindingName+"-2", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if run.Spec.FromRevision != rev1.Name || run.Spec.ToRevision != rev2.Name || run.Spec.Strategy != "two" || run.Labels[flotillav1alpha1.BindingLabel] != bindingName {
				t.Errorf("run spec %+v labels %v", run.Spec, run.Labels)
			}
		},
	}, {
		name: "a run in progress: the first stage's cluster told to run the new revision, the run's status written",
		in: objects{template: v2, binding: rb("a=" + h1 + ",b=" + h1), policy: policy("two"), revisions: []*flotillav1alpha1.ResourceRevision{rev1, rev2},
			runs: []*flotillav1alpha1.RolloutRun{runOf(rev2, "")}},
		wantWrites:    []string{"patch resourcebindings " + rbPath, "update rolloutruns default/" + bindingName + "-2"},
		wantRevisions: "a=" + h2 + ",b=" + h1,
		check: func(t *testing.T, client *fake.Clientset) {
			run, err := client.FlotillaV1alpha1().RolloutRuns("default").Get(context.Background(), bindingName+"-2", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if run.Status.Phase != flotillav1alpha1.RolloutProgressing || run.Status.CurrentStage != "s1" || len(run.Status.Stages) != 2 {
				t.Errorf("run status %+v, want Progressing at s1 with two stages", run.Status)
			}
		},
	}, {
		name: "a halted run: nothing more",
		in: objects{template: v2, binding: rb("a=" + h2 + ",b=" + h1), policy: policy("two"), revisions: []*flotillav1alpha1.ResourceRevision{rev1, rev2},
			runs: []*flotillav1alpha1.RolloutRun{runOf(rev2, flotillav1alpha1.RolloutHalted)}},
	}, {
		name: "the template changed again during a run: the run superseded, a new one started",
		in: objects{template: v1, binding: rb("a=" + h2 + ",b=" + h1), policy: policy("two"), revisions: []*flotillav1alpha1.ResourceRevision{rev1, rev2},
			runs: []*flotillav1alpha1.RolloutRun{runOf(rev2, flotillav1alpha1.RolloutProgressing)}},
		wantWrites: []string{"create rolloutruns default/" + bindingName + "-3", "update resourcerevisions default/" + rev1.Name,
			"update rolloutruns default/" + bindingName + "-2"},
		check: func(t *testing.T, client *fake.Clientset) {
			old, err := client.FlotillaV1alpha1().RolloutRuns("default").Get(context.Background(), bindingName+"-2", metav1.GetOptions{})
			if err != nil || old.Status.Phase != flotillav1alpha1.RolloutSuperseded {
				t.Errorf("old run %v %+v, want Superseded", err, old.Status)
			}
			r, err := client.FlotillaV1alpha1().ResourceRevisions("default").Get(context.Background(), rev1.Name, metav1.GetOptions{})
			if err != nil || r.Revision != 3 {
				t.Errorf("revision %s: %v, number %d, want renumbered 3 (the template went back to it)", rev1.Name, err, r.Revision)
			}
		},
	}, {
		name: "the template went back to a revision an older run completed: a new run of it, renumbered",
		in: objects{template: v1, binding: rb("a=" + h2 + ",b=" + h2), policy: policy("two"), revisions: []*flotillav1alpha1.ResourceRevision{rev1, rev2},
			runs: []*flotillav1alpha1.RolloutRun{runOf(rev1, flotillav1alpha1.RolloutCompleted), runOf(rev2, flotillav1alpha1.RolloutCompleted)}},
		wantWrites: []string{"create rolloutruns default/" + bindingName + "-3", "update resourcerevisions default/" + rev1.Name},
	}, {
		name: "new clusters held in their stage: a new run holds them at the revision it starts from",
		in: objects{strategy: inStage(), template: v2, binding: rb("a=" + h1 + ",b=" + h1), policy: policy("two"),
			revisions: []*flotillav1alpha1.ResourceRevision{rev1}},
		wantWrites:    []string{"create resourcerevisions default/" + rev2.Name, "create rolloutruns default/" + bindingName + "-2", "patch resourcebindings " + rbPath},
		wantRevisions: "*=" + h1 + ",a=" + h1 + ",b=" + h1,
	}, {
		name: "new clusters held in their stage: a cluster joining during the run stays at the old revision until its stage",
		in: objects{strategy: inStage(), template: v2, policy: policy("two"), revisions: []*flotillav1alpha1.ResourceRevision{rev1, rev2},
			binding: rb("*=" + h1 + ",a=" + h2), runs: []*flotillav1alpha1.RolloutRun{func() *flotillav1alpha1.RolloutRun {
				r := runOf(rev2, flotillav1alpha1.RolloutProgressing)
				r.Spec.FromRevision = rev1.Name
				r.Status.CurrentStage = "s1"
				r.Status.Stages = []flotillav1alpha1.StageStatus{{Name: "s1", Phase: flotillav1alpha1.StageProgressing, StartTime: &metav1.Time{Time: t0}}}
				return r
			}()}},
		wantWrites:    []string{"patch resourcebindings " + rbPath, "update rolloutruns default/" + bindingName + "-2"},
		wantRevisions: "*=" + h1 + ",a=" + h2 + ",b=" + h1,
	}, {
		name:          "the policy no longer names a strategy: every cluster released",
		in:            objects{template: v2, binding: rb("a=" + h2 + ",b=" + h1), policy: policy(""), revisions: []*flotillav1alpha1.ResourceRevision{rev1, rev2}},
		wantWrites:    []string{"patch resourcebindings " + rbPath},
		wantRevisions: "null",
	}, {
		name: "the binding is gone: its revisions and runs deleted",
		in: objects{template: v2, policy: policy("two"), revisions: []*flotillav1alpha1.ResourceRevision{rev1, rev2},
			runs: []*flotillav1alpha1.RolloutRun{runOf(rev2, flotillav1alpha1.RolloutCompleted)}},
		wantWrites: []string{"delete resourcerevisions default/" + rev1.Name, "delete resourcerevisions default/" + rev2.Name,
			"delete rolloutruns default/" + bindingName + "-2"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, client := newController(t, tc.in)
			if err := c.reconcile(context.Background(), names.BindingKey("default", bindingName)); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if diff := cmp.Diff(tc.wantWrites, workertest.Writes(client.Actions())); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			got := ""
			for _, a := range client.Actions() {
				if p, ok := a.(clienttesting.PatchAction); ok && a.GetResource().Resource == "resourcebindings" {
					var patch struct {
						Metadata struct {
							Annotations map[string]*string `json:"annotations"`
						} `json:"metadata"`
					}
					if err := json.Unmarshal(p.GetPatch(), &patch); err != nil {
						t.Fatal(err)
					}
					got = "null"
					if v := patch.Metadata.Annotations[flotillav1alpha1.RevisionsAnnotation]; v != nil {
						got = *v
					}
				}
			}
			if got != tc.wantRevisions {
				t.Errorf("revisions patched %q, want %q", got, tc.wantRevisions)
			}
			if tc.check != nil {
				tc.check(t, client)
			}
		})
	}
}

func TestReconcileStrategy(t *testing.T) {
	t.Parallel()
	bad := strategy()
	bad.Spec.Stages[1].Clusters.Names = []string{"z"}
	tests := []struct {
		name       string
		strategy   *flotillav1alpha1.RolloutStrategy
		wantStatus metav1.ConditionStatus
		wantMsg    string
	}{
		{"every stage selects a cluster", strategy(), metav1.ConditionTrue, "Each of the 2 stages selects registered clusters"},
		{"a stage selects none", bad, metav1.ConditionFalse, "stages s2 select no cluster"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, client := newController(t, objects{strategy: tc.strategy, template: nginx("nginx:1"), policy: policy("")})
			if err := c.reconcileStrategy(context.Background(), "two"); err != nil {
				t.Fatal(err)
			}
			s, err := client.FlotillaV1alpha1().RolloutStrategies().Get(context.Background(), "two", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(s.Status.Conditions, strategyConditionReady)
			if cond == nil || cond.Status != tc.wantStatus || !strings.Contains(cond.Message, tc.wantMsg) {
				t.Errorf("Ready condition %+v, want %s with %q", cond, tc.wantStatus, tc.wantMsg)
			}
		})
	}
}

// A run the controller created and its cache does not show yet holds the
// binding (no second run, no write) and asks for a look again; once it is
// cached, or too long unseen, the binding is synced.
func TestReconcileWaitsForCreatedRun(t *testing.T) {
	t.Parallel()
	v1, v2 := nginx("nginx:1"), nginx("nginx:2")
	h1 := rolloutplan.Hash(v1)
	key := names.BindingKey("default", bindingName)
	in := objects{template: v2, binding: rb("a=" + h1 + ",b=" + h1), policy: policy("two"), revisions: []*flotillav1alpha1.ResourceRevision{revision(v1, 1), revision(v2, 2)}}

	c, client := newController(t, in)
	c.created.Store(key, createdRun{name: bindingName + "-2", at: t0.Add(-time.Second)})
	if err := c.reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if w := workertest.Writes(client.Actions()); len(w) != 0 {
		t.Errorf("writes %v while the created run is not cached, want none", w)
	}
	if d := c.queue.(*workertest.Queue).Delayed(); len(d) != 1 || d[0].Key != key || d[0].Delay != time.Second {
		t.Errorf("delayed %v, want %s again in 1s", d, key)
	}

	c, client = newController(t, in)
	c.created.Store(key, createdRun{name: bindingName + "-2", at: t0.Add(-time.Minute)})
	if err := c.reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"create rolloutruns default/" + bindingName + "-2"}, workertest.Writes(client.Actions())); diff != "" {
		t.Errorf("writes once the record is stale (-want +got):\n%s", diff)
	}
}

// The revisions patch sends no resourceVersion: it may land over a version
// the cache has not seen yet (the scheduler's), which the cache then shows
// first. The patch is still read as written there, until the cache shows
// the version it produced.
func TestRevisionsPatchPendingOverAnUnseenVersion(t *testing.T) {
	t.Parallel()
	in := objects{template: nginx("nginx:1"), binding: rb(""), policy: policy("two")}
	c, client := newController(t, in)
	client.PrependReactor("patch", "resourcebindings", func(clienttesting.Action) (bool, runtime.Object, error) {
		out := rb("")
		out.ResourceVersion = "9"
		return true, out, nil
	})
	b := &binding{key: names.BindingKey("default", bindingName), uid: "rb1", rv: "5", namespace: "default", name: bindingName}
	if err := c.patchRevisions(context.Background(), b, map[string]string{"a": "h1", "b": "h1"}); err != nil {
		t.Fatal(err)
	}
	want := b.annotations[flotillav1alpha1.RevisionsAnnotation]
	if v, ok := c.revisionWrites.Pending("rb1", "7"); !ok || v == nil || *v != want {
		t.Errorf("cache at 7, between the version the patch replaced and the one it produced: %v %v, want %q pending", v, ok, want)
	}
	if _, ok := c.revisionWrites.Pending("rb1", "9"); ok {
		t.Error("pending once the cache shows the patch")
	}
}
