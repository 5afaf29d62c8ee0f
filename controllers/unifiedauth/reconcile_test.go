package unifiedauth

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"
	"github.com/flotilla-io/flotilla/names"
)

// The controller-level fixture: listers over indexers (Clusters, host
// RBAC, Works), the fake clientset recording the writes and storing
// created Works as the registry does, a fake recorder.

var (
	fixedNow    = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	roleWork    = names.WorkName("ClusterRole", ImpersonatorName, "")
	bindingWork = names.WorkName("ClusterRoleBinding", ImpersonatorName, "")
)

const (
	succeeded = "Normal SyncImpersonationConfigSucceed Sync impersonation config succeed."
	memberNS  = "karmada-es-member1"
)

type fixture struct {
	ctrl     *Controller
	client   *karmadafake.Clientset
	recorder *record.FakeRecorder
	works    cache.Indexer
}

type objects struct {
	clusters []*clusterv1alpha1.Cluster
	rbac     []runtime.Object // ClusterRoles and ClusterRoleBindings on the host
	works    []*workv1alpha1.Work
}

func newIndexer() cache.Indexer {
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

func newFixture(t *testing.T, in objects) *fixture {
	t.Helper()
	clusters, roles, bindings := newIndexer(), newIndexer(), newIndexer()
	f := &fixture{works: newIndexer(), recorder: record.NewFakeRecorder(16)}
	add := func(idx cache.Indexer, obj any) {
		if err := idx.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range in.clusters {
		add(clusters, c)
	}
	for _, o := range in.rbac {
		switch o.(type) {
		case *rbacv1.ClusterRole:
			add(roles, o)
		case *rbacv1.ClusterRoleBinding:
			add(bindings, o)
		}
	}
	var stored []runtime.Object
	for _, w := range in.works {
		add(f.works, w)
		stored = append(stored, w.DeepCopy())
	}
	f.client = karmadafake.NewSimpleClientset(stored...)
	f.client.PrependReactor("create", "works", f.mutateWork)
	f.ctrl = &Controller{
		clusters: clusterlisters.NewClusterLister(clusters),
		recorder: f.recorder,
	}
	f.ctrl.setReconcilers(rbaclisters.NewClusterRoleLister(roles), rbaclisters.NewClusterRoleBindingLister(bindings),
		worklisters.NewWorkLister(f.works), f.client)
	return f
}

// mutateWork stores a created Work as the registry does, mutated
// (permanent id, manifest labelled); the fake tracker does not.
func (f *fixture) mutateWork(a clienttesting.Action) (bool, runtime.Object, error) {
	w := a.(clienttesting.CreateAction).GetObject().(*workv1alpha1.Work).DeepCopy()
	if err := mutation.MutateWork(w, true); err != nil {
		return true, nil, err
	}
	if err := f.client.Tracker().Create(a.GetResource(), w, a.GetNamespace()); err != nil {
		return true, nil, err
	}
	return true, w, nil
}

func (f *fixture) events() []string { return workertest.Events(f.recorder.Events) }

// writes are the recorded writes as "verb resource namespace/name", sorted.
func (f *fixture) writes() []string { return workertest.Writes(f.client.Actions()) }

// written returns the Work the write of name sent (created, or the patch
// decoded as a Work).
func (f *fixture) written(t *testing.T, name string) *workv1alpha1.Work {
	t.Helper()
	for _, a := range f.client.Actions() {
		switch a := a.(type) {
		case clienttesting.CreateAction:
			if w := a.GetObject().(*workv1alpha1.Work); w.Name == name {
				return w
			}
		case clienttesting.PatchAction:
			if a.GetName() == name {
				w := &workv1alpha1.Work{}
				if err := json.Unmarshal(a.GetPatch(), w); err != nil {
					t.Fatal(err)
				}
				return w
			}
		}
	}
	t.Fatalf("no write of Work %s", name)
	return nil
}

// resync makes the cache hold what the server stores and forgets the requests.
func (f *fixture) resync(t *testing.T) {
	t.Helper()
	list, err := f.client.WorkV1alpha1().Works("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]any, 0, len(list.Items))
	for i := range list.Items {
		objs = append(objs, &list.Items[i])
	}
	if err := f.works.Replace(objs, ""); err != nil {
		t.Fatal(err)
	}
	f.client.ClearActions()
}

func member1(mods ...func(*clusterv1alpha1.Cluster)) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1", UID: "c-uid"},
		Spec: clusterv1alpha1.ClusterSpec{ImpersonatorSecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1-impersonator"}}}
	for _, m := range mods {
		m(c)
	}
	return c
}

// proxyTo are the host RBAC letting users proxy to member1.
func proxyTo(users ...string) []runtime.Object {
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "proxy"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "proxy"}}
	for _, u := range users {
		b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, Name: u})
	}
	return []runtime.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.karmada.io"},
			Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1"}, Verbs: []string{"get"}}}},
		b,
	}
}

// stored are the Works a reconcile of member1 under rbac left on the server.
func stored(t *testing.T, rbac []runtime.Object) []*workv1alpha1.Work {
	t.Helper()
	f := newFixture(t, objects{clusters: []*clusterv1alpha1.Cluster{member1()}, rbac: rbac})
	if err := f.ctrl.reconcile(context.Background(), "member1"); err != nil {
		t.Fatal(err)
	}
	list, err := f.client.WorkV1alpha1().Works(memberNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*workv1alpha1.Work
	for i := range list.Items {
		list.Items[i].ResourceVersion = "1"
		out = append(out, &list.Items[i])
	}
	return out
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         objects
		wantWrites []string
		// wantUsers are the user names the written ClusterRole lets the
		// impersonator impersonate (nil when it is not written).
		wantUsers  []string
		wantEvents []string
		wantErr    bool
	}{
		{
			name:       "no Works: the ClusterRole and its binding shipped",
			in:         objects{clusters: []*clusterv1alpha1.Cluster{member1()}, rbac: proxyTo("alice")},
			wantWrites: sortedWrites("create works "+memberNS+"/"+roleWork, "create works "+memberNS+"/"+bindingWork),
			wantUsers:  []string{"alice"},
			wantEvents: []string{succeeded},
		},
		{
			name: "Works up to date: nothing",
			in:   objects{clusters: []*clusterv1alpha1.Cluster{member1()}, rbac: proxyTo("alice"), works: stored(t, proxyTo("alice"))},
		},
		{
			name:       "host RBAC changed: the ClusterRole's Work patched",
			in:         objects{clusters: []*clusterv1alpha1.Cluster{member1()}, rbac: proxyTo("alice", "bob"), works: stored(t, proxyTo("alice"))},
			wantWrites: []string{"patch works " + memberNS + "/" + roleWork},
			wantUsers:  []string{"alice", "bob"},
			wantEvents: []string{succeeded},
		},
		{
			name: "the binding's Work removed by someone else: put back",
			in: objects{clusters: []*clusterv1alpha1.Cluster{member1()}, rbac: proxyTo("alice"),
				works: only(roleWork, stored(t, proxyTo("alice")))},
			wantWrites: []string{"create works " + memberNS + "/" + bindingWork},
			wantEvents: []string{succeeded},
		},
		{
			name: "the impersonator moved to another namespace: the binding's Work patched",
			in: objects{clusters: []*clusterv1alpha1.Cluster{member1(func(c *clusterv1alpha1.Cluster) { c.Spec.ImpersonatorSecretRef.Namespace = "other" })},
				rbac: proxyTo("alice"), works: stored(t, proxyTo("alice"))},
			wantWrites: []string{"patch works " + memberNS + "/" + bindingWork},
			wantEvents: []string{succeeded},
		},
		{
			name: "no impersonator secret: nothing",
			in: objects{clusters: []*clusterv1alpha1.Cluster{member1(func(c *clusterv1alpha1.Cluster) { c.Spec.ImpersonatorSecretRef = nil })},
				rbac: proxyTo("alice")},
		},
		{
			name: "cluster being deleted: nothing",
			in: objects{clusters: []*clusterv1alpha1.Cluster{member1(func(c *clusterv1alpha1.Cluster) { c.DeletionTimestamp = &fixedNow })},
				rbac: proxyTo("alice")},
		},
		{name: "cluster gone: nothing", in: objects{rbac: proxyTo("alice")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.in)
			err := f.ctrl.reconcile(context.Background(), "member1")
			if (err != nil) != tc.wantErr {
				t.Fatalf("reconcile: %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantWrites, f.writes()); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tc.wantUsers != nil {
				w := f.written(t, roleWork)
				if w.Annotations[fingerprintAnnotation] == "" {
					t.Errorf("Work annotations %v lack the fingerprint", w.Annotations)
				}
				role := &rbacv1.ClusterRole{}
				if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, role); err != nil {
					t.Fatal(err)
				}
				want := []rbacv1.PolicyRule{
					{APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: tc.wantUsers, Verbs: []string{"impersonate"}},
					{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"impersonate"}},
				}
				if diff := cmp.Diff(want, role.Rules); diff != "" {
					t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
				}
			}
			if slicesContain(f.writes(), "create works "+memberNS+"/"+bindingWork) {
				checkCreated(t, f)
			}
			// The informer delivers the writes: nothing more to do.
			f.resync(t)
			if err := f.ctrl.reconcile(context.Background(), "member1"); err != nil {
				t.Fatal(err)
			}
			if w := f.writes(); len(w) != 0 {
				t.Errorf("second reconcile wrote %v", w)
			}
			if ev := f.events(); len(ev) != 0 {
				t.Errorf("second reconcile recorded %v", ev)
			}
		})
	}
}

// checkCreated checks what the created Works carry besides the rules: the
// binding of the impersonator service account, the owner, the conflict
// resolution, the field manager.
func checkCreated(t *testing.T, f *fixture) {
	t.Helper()
	for _, a := range f.client.Actions() {
		c := a.(clienttesting.CreateAction)
		w := c.GetObject().(*workv1alpha1.Work)
		if len(w.OwnerReferences) != 1 || w.OwnerReferences[0].Kind != "Cluster" || w.OwnerReferences[0].Name != "member1" {
			t.Errorf("%s: owners %v, want the Cluster", w.Name, w.OwnerReferences)
		}
		if w.Annotations[workv1alpha2.ResourceConflictResolutionAnnotation] != workv1alpha2.ResourceConflictResolutionOverwrite {
			t.Errorf("%s: annotations %v", w.Name, w.Annotations)
		}
		if !cmp.Equal(w.Finalizers, []string{workv1alpha1.ExecutionControllerFinalizer}) {
			t.Errorf("%s: finalizers %v", w.Name, w.Finalizers)
		}
		if w.Name != bindingWork {
			continue
		}
		b := &rbacv1.ClusterRoleBinding{}
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, b); err != nil {
			t.Fatal(err)
		}
		want := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ImpersonatorName, Namespace: "karmada-cluster"}}
		if diff := cmp.Diff(want, b.Subjects); diff != "" || b.RoleRef.Name != ImpersonatorName || b.Name != ImpersonatorName {
			t.Errorf("ClusterRoleBinding %s to %v, subjects (-want +got):\n%s", b.Name, b.RoleRef, diff)
		}
	}
}

// only is the Work called name among works.
func only(name string, works []*workv1alpha1.Work) []*workv1alpha1.Work {
	for _, w := range works {
		if w.Name == name {
			return []*workv1alpha1.Work{w}
		}
	}
	return nil
}

// sortedWrites is its arguments, sorted as writes are.
func sortedWrites(s ...string) []string {
	sort.Strings(s)
	return s
}

func slicesContain(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// A failed write is SyncImpersonationConfigFailed on the Cluster and
// retried; the binding's Work waits for the role's.
func TestReconcileWriteFails(t *testing.T) {
	t.Parallel()
	f := newFixture(t, objects{clusters: []*clusterv1alpha1.Cluster{member1()}, rbac: proxyTo("alice")})
	f.client.PrependReactor("create", "works", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd down")
	})
	if err := f.ctrl.reconcile(context.Background(), "member1"); err == nil {
		t.Fatal("no error")
	}
	if diff := cmp.Diff([]string{"create works " + memberNS + "/" + roleWork}, f.writes()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	want := []string{"Warning SyncImpersonationConfigFailed Failed to sync impersonation config, err: etcd down"}
	if diff := cmp.Diff(want, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestReconcileBeforeWorksDelivered: a second pass over the cluster before
// the Work informer has the Works the first created reads them as stored:
// nothing created again (the server would refuse it), no failure; a
// change in between patches the created Work.
func TestReconcileBeforeWorksDelivered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, objects{clusters: []*clusterv1alpha1.Cluster{member1()}, rbac: proxyTo("alice")})
	if err := f.ctrl.reconcile(context.Background(), "member1"); err != nil {
		t.Fatal(err)
	}
	f.client.ClearActions()
	if err := f.ctrl.reconcile(context.Background(), "member1"); err != nil {
		t.Fatalf("second pass: %v", err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("second pass wrote %v, want nothing", w)
	}
	if diff := cmp.Diff([]string{succeeded}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// A change before delivery: the created Work is patched.
	rbac := proxyTo("alice", "bob")
	for _, o := range rbac {
		if b, ok := o.(*rbacv1.ClusterRoleBinding); ok {
			f.ctrl.rbac.listBindings = func() ([]*rbacv1.ClusterRoleBinding, error) { return []*rbacv1.ClusterRoleBinding{b}, nil }
		}
	}
	if err := f.ctrl.reconcile(context.Background(), "member1"); err != nil {
		t.Fatalf("pass after a change: %v", err)
	}
	if diff := cmp.Diff([]string{"patch works " + memberNS + "/" + roleWork}, f.writes()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	// Delivered through the informer: forgotten, the cache read.
	f.resync(t)
	for _, w := range []string{roleWork, bindingWork} {
		obj, _, err := f.works.GetByKey(memberNS + "/" + w)
		if err != nil || obj == nil {
			t.Fatalf("cache lacks %s: %v", w, err)
		}
		f.ctrl.created.Handler().OnAdd(obj, false)
	}
	if n := f.ctrl.created.Len(); n != 0 {
		t.Errorf("%d Works remembered after delivery, want 0", n)
	}
}
