package work

import (
	"context"
	"errors"
	"hash/fnv"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/placement"
)

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// binding is ResourceBinding name of namespace ns requesting cpu per
// replica, with replicas on each of clusters.
func binding(name, cpu string, replicas ...int32) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	rb.Spec.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{ResourceRequest: rl("cpu", cpu)}
	for i, n := range replicas {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: []string{"member1", "member2"}[i], Replicas: n})
		rb.Spec.Replicas += n
	}
	return rb
}

func TestQuotaCheck(t *testing.T) {
	t.Parallel()
	team := policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: rl("cpu", "30m", "memory", "100Mi")}}
	other := binding("other", "10m", 1)
	tests := map[string]struct {
		obj, old *workv1alpha2.ResourceBinding
		quotas   []policyv1alpha1.FederatedResourceQuota
		want     string // "" allowed
	}{
		"new unscheduled binding":                        {obj: binding("web", "10m"), quotas: []policyv1alpha1.FederatedResourceQuota{team}},
		"new binding within":                             {obj: binding("web", "10m", 2), quotas: []policyv1alpha1.FederatedResourceQuota{team}},
		"new binding beyond":                             {obj: binding("web", "10m", 2, 1), quotas: []policyv1alpha1.FederatedResourceQuota{team}, want: "FederatedResourceQuota(ns/team) exceeded for resource cpu: requested sum 40m, limit 30m."},
		"scale-up beyond":                                {obj: binding("web", "10m", 3), old: binding("web", "10m", 1), quotas: []policyv1alpha1.FederatedResourceQuota{team}, want: "FederatedResourceQuota(ns/team) exceeded for resource cpu: requested sum 40m, limit 30m."},
		"higher requests beyond":                         {obj: binding("web", "20m", 2), old: binding("web", "10m", 2), quotas: []policyv1alpha1.FederatedResourceQuota{team}, want: "FederatedResourceQuota(ns/team) exceeded for resource cpu: requested sum 50m, limit 30m."},
		"scale-down of an overused":                      {obj: binding("web", "10m", 3), old: binding("web", "10m", 4), quotas: []policyv1alpha1.FederatedResourceQuota{team}},
		"unchanged use":                                  {obj: binding("web", "10m", 2, 2), old: binding("web", "10m", 2, 2), quotas: []policyv1alpha1.FederatedResourceQuota{team}},
		"no quota in the namespace":                      {obj: binding("web", "10m", 9)},
		"resource the quota omits":                       {obj: binding("web", "10m", 2), quotas: []policyv1alpha1.FederatedResourceQuota{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mem"}, Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: rl("memory", "1Mi")}}}},
		"the binding's own old use is not counted twice": {obj: binding("other", "10m", 2), old: other, quotas: []policyv1alpha1.FederatedResourceQuota{team}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := &quotaCheck{
				quotas: func(context.Context, string) ([]policyv1alpha1.FederatedResourceQuota, error) { return tc.quotas, nil },
				bindings: func(context.Context, string) ([]workv1alpha2.ResourceBinding, error) {
					return []workv1alpha2.ResourceBinding{*other, *binding("web", "10m", 1)}, nil
				},
			}
			err := c.validate(context.Background(), tc.obj, tc.old)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !placement.IsQuotaRefusal(err) || !apierrors.IsForbidden(err) || apierrors.ReasonForError(err) != "QuotaExceeded" {
				t.Fatalf("error %v, want a 403 QuotaExceeded", err)
			}
			if code := err.(apierrors.APIStatus).Status().Code; code != http.StatusForbidden {
				t.Errorf("code %d, want 403", code)
			}
			if want := `admission webhook "resourcebinding.karmada.io" denied the request: ` + tc.want; err.Error() != want {
				t.Errorf("message %q, want Karmada's webhook denial %q", err.Error(), want)
			}
		})
	}
}

func TestQuotaCheckListFailure(t *testing.T) {
	t.Parallel()
	c := &quotaCheck{
		quotas: func(context.Context, string) ([]policyv1alpha1.FederatedResourceQuota, error) {
			return nil, errors.New("etcd down")
		},
	}
	if err := c.validate(context.Background(), binding("web", "10m", 1), nil); !apierrors.IsInternalError(err) {
		t.Errorf("error %v, want an internal error: a write is never let through unchecked", err)
	}
	// A write raising no use needs no list.
	if err := c.validate(context.Background(), binding("web", "10m", 1), binding("web", "10m", 1)); err != nil {
		t.Errorf("unchanged use refused: %v", err)
	}
}

// Only a write raising use in a namespace with quotas is serialized: it
// holds its namespace's lock from its check until released (after its
// write), once however often the check runs; other writes take none.
func TestQuotaGuardLocking(t *testing.T) {
	t.Parallel()
	team := policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: rl("cpu", "1")}}
	var quotas []policyv1alpha1.FederatedResourceQuota
	g := newQuotaGuard(nil, func(context.Context, string) ([]policyv1alpha1.FederatedResourceQuota, error) { return quotas, nil }, nil)
	stripe := func() *sync.Mutex {
		h := fnv.New32a()
		_, _ = h.Write([]byte("ns"))
		return &g.locks[h.Sum32()%uint32(len(g.locks))]
	}()
	held := func() bool {
		if stripe.TryLock() {
			stripe.Unlock()
			return false
		}
		return true
	}
	noBindings := func(context.Context, string) ([]workv1alpha2.ResourceBinding, error) { return nil, nil }
	for name, tc := range map[string]struct {
		quotas   []policyv1alpha1.FederatedResourceQuota
		obj, old *workv1alpha2.ResourceBinding
		wantLock bool
	}{
		"raising, with a quota":     {quotas: []policyv1alpha1.FederatedResourceQuota{team}, obj: binding("web", "10m", 1), wantLock: true},
		"raising, without quotas":   {obj: binding("web", "10m", 1)},
		"not raising, with a quota": {quotas: []policyv1alpha1.FederatedResourceQuota{team}, obj: binding("web", "10m", 1), old: binding("web", "10m", 1)},
	} {
		quotas = tc.quotas
		c, release := g.check()
		c.bindings = noBindings
		for range 2 { // an update retried after a conflict
			if err := c.validate(context.Background(), tc.obj, tc.old); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if got := held(); got != tc.wantLock {
			t.Errorf("%s: lock held %v, want %v", name, got, tc.wantLock)
		}
		release()
		if held() {
			t.Errorf("%s: lock still held after release", name)
		}
	}
}

// With replicas, a raising write also holds the namespace's shared lock,
// once however often its check runs, released with the local one; a
// shared lock that cannot be taken refuses the write (never unchecked).
func TestQuotaGuardSharedLock(t *testing.T) {
	t.Parallel()
	team := policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: rl("cpu", "1")}}
	quotas := func(context.Context, string) ([]policyv1alpha1.FederatedResourceQuota, error) {
		return []policyv1alpha1.FederatedResourceQuota{team}, nil
	}
	var taken, released int
	var fail error
	shared := func(_ context.Context, namespace string) (func(), error) {
		if fail != nil {
			return nil, fail
		}
		if namespace != "ns" {
			t.Errorf("shared lock of %q", namespace)
		}
		taken++
		return func() { released++ }, nil
	}
	g := newQuotaGuard(nil, quotas, shared)
	c, release := g.check()
	c.bindings = func(context.Context, string) ([]workv1alpha2.ResourceBinding, error) { return nil, nil }
	for range 2 {
		if err := c.validate(context.Background(), binding("web", "10m", 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	if taken != 1 || released != 0 {
		t.Errorf("before release: taken %d, released %d; want 1, 0", taken, released)
	}
	release()
	if released != 1 {
		t.Errorf("after release: released %d, want 1", released)
	}
	// A write raising nothing takes no shared lock.
	c, release = g.check()
	if err := c.validate(context.Background(), binding("web", "10m", 1), binding("web", "10m", 1)); err != nil {
		t.Fatal(err)
	}
	release()
	if taken != 1 {
		t.Errorf("a write raising nothing took the shared lock")
	}

	fail = errors.New("etcd unreachable")
	c, release = g.check()
	c.bindings = func(context.Context, string) ([]workv1alpha2.ResourceBinding, error) { return nil, nil }
	if err := c.validate(context.Background(), binding("web", "10m", 1), nil); !apierrors.IsInternalError(err) {
		t.Errorf("error %v, want an internal error when the shared lock cannot be taken", err)
	}
	release()
	h := fnv.New32a()
	_, _ = h.Write([]byte("ns"))
	if stripe := &g.locks[h.Sum32()%uint32(len(g.locks))]; !stripe.TryLock() {
		t.Error("the local lock is still held after a failed shared lock's release")
	} else {
		stripe.Unlock()
	}
}
