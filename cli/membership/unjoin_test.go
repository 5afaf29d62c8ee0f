package membership

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

func newUnjoin() *UnjoinOptions {
	o := NewUnjoinOptions()
	o.ClusterName = "member1"
	o.Timeout, o.pollInterval = 2*time.Second, 5*time.Millisecond
	return o
}

// joined returns an env where member1 was joined, with the actions cleared.
func joined(t *testing.T, memberObjs ...runtime.Object) *env {
	t.Helper()
	e := newEnv(t, tokensOnCreate, memberObjs)
	if err := newJoin().run(context.Background(), e.cp, e.m, &bytes.Buffer{}, io.Discard); err != nil {
		t.Fatalf("join: %v", err)
	}
	e.clearActions()
	return e
}

func TestUnjoinDeletesWhatJoinCreated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := joined(t)
	var out bytes.Buffer
	if err := newUnjoin().run(ctx, e.cp, e.m, &out); err != nil {
		t.Fatalf("unjoin: %v", err)
	}
	want := []string{
		"delete clusterrolebindings karmada-controller-manager:karmada-member1",
		"delete clusterroles karmada-controller-manager:karmada-member1",
		"delete clusters member1",
		"delete namespaces karmada-cluster",
		"delete secrets karmada-cluster/karmada-impersonator",
		"delete secrets karmada-cluster/karmada-member1",
		"delete secrets karmada-cluster/member1",
		"delete secrets karmada-cluster/member1-impersonator",
		"delete serviceaccounts karmada-cluster/karmada-impersonator",
		"delete serviceaccounts karmada-cluster/karmada-member1",
	}
	if diff := cmp.Diff(want, writes(e.fakes()...)); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if _, err := e.member.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Errorf("kube-system: %v", err)
	}
	if _, err := e.cpKube.CoreV1().Namespaces().Get(ctx, "karmada-cluster", metav1.GetOptions{}); err != nil {
		t.Errorf("the control-plane namespace is shared by all clusters and must stay: %v", err)
	}
	if !strings.HasSuffix(out.String(), "cluster(member1) is unjoined successfully\n") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestUnjoinKeepsWhatJoinDidNotCreate: the impersonator ServiceAccount
// karmadactl join made (it labels nothing) goes, as karmadactl unjoin
// deletes it; the namespace, which holds something else, stays.
func TestUnjoinKeepsWhatJoinDidNotCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The namespace and the impersonator ServiceAccount existed before join
	// (made by karmadactl), and the namespace holds something else.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-cluster", Labels: map[string]string{names.SystemLabel: "true"}}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: "karmada-impersonator"}}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: "other"}}
	e := joined(t, ns, sa, other)

	var out bytes.Buffer
	if err := newUnjoin().run(ctx, e.cp, e.m, &out); err != nil {
		t.Fatalf("unjoin: %v", err)
	}
	for _, w := range writes(&e.member.Fake) {
		if strings.Contains(w, "namespaces") || strings.Contains(w, "configmaps") {
			t.Errorf("unjoin deleted an object join did not create: %s", w)
		}
	}
	if _, err := e.member.CoreV1().ServiceAccounts("karmada-cluster").Get(ctx, "karmada-impersonator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("karmadactl's impersonator serviceaccount: got %v, want NotFound (karmadactl unjoin deletes it)", err)
	}
	// The token secret of that ServiceAccount was created by join: gone.
	if _, err := e.member.CoreV1().Secrets("karmada-cluster").Get(ctx, "karmada-impersonator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("impersonator token secret: got %v, want NotFound", err)
	}
	if !strings.Contains(out.String(), "member: namespace/karmada-cluster kept: not created by flotillactl") {
		t.Errorf("output does not say the namespace was kept:\n%s", out.String())
	}
}

func TestUnjoinToleratesMissingObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Nothing at all.
	e := newEnv(t, tokensOnCreate, nil)
	var out bytes.Buffer
	if err := newUnjoin().run(ctx, e.cp, e.m, &out); err != nil {
		t.Fatalf("unjoin of nothing: %v", err)
	}
	if got := writes(e.fakes()...); len(got) != 0 {
		t.Errorf("unjoin of nothing wrote %v", got)
	}
	if !strings.Contains(out.String(), "control plane: cluster/member1 not found") {
		t.Errorf("output:\n%s", out.String())
	}

	// Half: a previous unjoin deleted the Cluster and some member objects.
	e = joined(t)
	_ = e.cpKarmada.ClusterV1alpha1().Clusters().Delete(ctx, "member1", metav1.DeleteOptions{})
	_ = e.member.RbacV1().ClusterRoleBindings().Delete(ctx, "karmada-controller-manager:karmada-member1", metav1.DeleteOptions{})
	_ = e.member.CoreV1().ServiceAccounts("karmada-cluster").Delete(ctx, "karmada-member1", metav1.DeleteOptions{})
	if err := newUnjoin().run(ctx, e.cp, e.m, &bytes.Buffer{}); err != nil {
		t.Fatalf("unjoin of a half-unjoined cluster: %v", err)
	}
	if _, err := e.member.CoreV1().Namespaces().Get(ctx, "karmada-cluster", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member namespace: got %v, want NotFound", err)
	}

	// Objects vanishing between the read and the delete are not errors either.
	e = joined(t)
	e.member.PrependReactor("delete", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(corev1.Resource("x"), "x")
	})
	if err := newUnjoin().run(ctx, e.cp, e.m, &bytes.Buffer{}); err != nil {
		t.Fatalf("unjoin with racing deletes: %v", err)
	}
}

func TestUnjoinWithoutMemberKubeconfig(t *testing.T) {
	t.Parallel()
	e := joined(t)
	var out bytes.Buffer
	if err := newUnjoin().run(context.Background(), e.cp, nil, &out); err != nil {
		t.Fatalf("unjoin: %v", err)
	}
	if got := writes(&e.member.Fake); len(got) != 0 {
		t.Errorf("unjoin without --cluster-kubeconfig touched the member: %v", got)
	}
	want := []string{"delete secrets karmada-cluster/member1", "delete secrets karmada-cluster/member1-impersonator"}
	if diff := cmp.Diff(want, writes(&e.cpKube.Fake)); diff != "" {
		t.Errorf("control-plane writes (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), "the member was not cleaned up") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestUnjoinRefusesAnotherMember(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := joined(t)
	c, _ := e.cpKarmada.ClusterV1alpha1().Clusters().Get(ctx, "member1", metav1.GetOptions{})
	c.Spec.ID = "uid-of-another-member"
	if _, err := e.cpKarmada.ClusterV1alpha1().Clusters().Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.clearActions()
	err := newUnjoin().run(ctx, e.cp, e.m, &bytes.Buffer{})
	mustContain(t, err, `unjoin cluster "member1"`, "uid-of-another-member", "nothing was deleted")
	if got := writes(e.fakes()...); len(got) != 0 {
		t.Errorf("a refused unjoin wrote %v", got)
	}

	o := newUnjoin()
	o.Force = true
	if err := o.run(ctx, e.cp, e.m, &bytes.Buffer{}); err != nil {
		t.Fatalf("unjoin --force: %v", err)
	}
}

// finalizingClusters makes Cluster deletion asynchronous: delete only marks
// the Cluster, which disappears after `reads` more reads (never if < 0).
func finalizingClusters(t *testing.T, e *env, reads int) {
	var mu sync.Mutex
	deleting := false
	gvr := clusterv1alpha1.SchemeGroupVersion.WithResource("clusters")
	e.cpKarmada.PrependReactor("delete", "clusters", func(a clienttesting.Action) (bool, runtime.Object, error) {
		obj, err := e.cpKarmada.Tracker().Get(gvr, "", a.(clienttesting.DeleteAction).GetName())
		if err != nil {
			return true, nil, err
		}
		c := obj.(*clusterv1alpha1.Cluster).DeepCopy()
		c.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		c.Finalizers = []string{"karmada.io/cluster-controller"}
		mu.Lock()
		deleting = true
		mu.Unlock()
		return true, nil, e.cpKarmada.Tracker().Update(gvr, c, "")
	})
	e.cpKarmada.PrependReactor("get", "clusters", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if !deleting || reads < 0 {
			return false, nil, nil
		}
		if reads--; reads == 0 {
			if err := e.cpKarmada.Tracker().Delete(gvr, "", a.(clienttesting.GetAction).GetName()); err != nil {
				t.Errorf("finalizing: %v", err)
			}
		}
		return false, nil, nil
	})
}

func TestUnjoinWaitsForTheCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := joined(t)
	finalizingClusters(t, e, 3)
	if err := newUnjoin().run(ctx, e.cp, e.m, &bytes.Buffer{}); err != nil {
		t.Fatalf("unjoin: %v", err)
	}
	if _, err := e.cpKarmada.ClusterV1alpha1().Clusters().Get(ctx, "member1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster: got %v, want NotFound", err)
	}

	// The finalizer never completes: stop, keeping every credential.
	e = joined(t)
	finalizingClusters(t, e, -1)
	o := newUnjoin()
	o.Timeout = 50 * time.Millisecond
	err := o.run(ctx, e.cp, e.m, &bytes.Buffer{})
	mustContain(t, err, "still on the control plane", "karmada.io/cluster-controller", "credentials were kept")
	if diff := cmp.Diff([]string{"delete clusters member1"}, writes(e.fakes()...)); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}

	// --wait=false does not wait.
	e = joined(t)
	finalizingClusters(t, e, -1)
	o = newUnjoin()
	o.Wait = false
	if err := o.run(ctx, e.cp, e.m, &bytes.Buffer{}); err != nil {
		t.Fatalf("unjoin --wait=false: %v", err)
	}
}

func TestUnjoinKeepsSharedObjectsOfOtherJoins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := joined(t)
	// The same member joined as member2 too (e.g. to a second control plane).
	o := newJoin()
	o.ClusterName, o.Force = "member2", true
	if err := o.run(ctx, e.cp, e.m, &bytes.Buffer{}, io.Discard); err != nil {
		t.Fatalf("join member2: %v", err)
	}
	var out bytes.Buffer
	if err := newUnjoin().run(ctx, e.cp, e.m, &out); err != nil {
		t.Fatalf("unjoin: %v", err)
	}
	if _, err := e.member.CoreV1().ServiceAccounts("karmada-cluster").Get(ctx, "karmada-impersonator", metav1.GetOptions{}); err != nil {
		t.Errorf("impersonator serviceaccount: %v", err)
	}
	if _, err := e.member.RbacV1().ClusterRoleBindings().Get(ctx, "karmada-controller-manager:karmada-member2", metav1.GetOptions{}); err != nil {
		t.Errorf("member2's binding: %v", err)
	}
	if _, err := e.member.RbacV1().ClusterRoleBindings().Get(ctx, "karmada-controller-manager:karmada-member1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member1's binding: got %v, want NotFound", err)
	}
	if !strings.Contains(out.String(), "still used by clusterrolebinding/karmada-controller-manager:karmada-member2") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestUnjoinDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	e := joined(t)
	o := newUnjoin()
	o.DryRun = true
	var out bytes.Buffer
	if err := o.run(context.Background(), e.cp, e.m, &out); err != nil {
		t.Fatalf("unjoin --dry-run: %v", err)
	}
	if got := writes(e.fakes()...); len(got) != 0 {
		t.Errorf("dry run wrote %v", got)
	}
	if !strings.Contains(out.String(), "member: namespace/karmada-cluster deleted (dry run)") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestUnjoinDeletesWhatKarmadactlJoinCreated: objects of join's names
// without flotillactl's label (karmadactl join's) go too, the member being
// the Cluster's.
func TestUnjoinDeletesWhatKarmadactlJoinCreated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := joined(t)
	rbac := e.member.RbacV1()
	for _, name := range []string{"karmada-controller-manager:karmada-member1"} {
		crb, err := rbac.ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		crb.Labels = nil
		if _, err := rbac.ClusterRoleBindings().Update(ctx, crb, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		cr, err := rbac.ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cr.Labels = nil
		if _, err := rbac.ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sa, err := e.member.CoreV1().ServiceAccounts("karmada-cluster").Get(ctx, "karmada-member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa.Labels = nil
	if _, err := e.member.CoreV1().ServiceAccounts("karmada-cluster").Update(ctx, sa, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.clearActions()
	if err := newUnjoin().run(ctx, e.cp, e.m, &bytes.Buffer{}); err != nil {
		t.Fatalf("unjoin: %v", err)
	}
	got := writes(&e.member.Fake)
	for _, w := range []string{
		"delete clusterrolebindings karmada-controller-manager:karmada-member1",
		"delete clusterroles karmada-controller-manager:karmada-member1",
		"delete serviceaccounts karmada-cluster/karmada-member1",
	} {
		if !slices.Contains(got, w) {
			t.Errorf("unjoin did not %s (writes %v)", w, got)
		}
	}
}
