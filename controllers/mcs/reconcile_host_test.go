package mcs

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
)

// hostRecorder is a fake host for hostSliceReconciler: the copies it
// stores, the writes asked of it, and the errors it answers by verb.
type hostRecorder struct {
	mu     sync.Mutex
	stored []*discoveryv1.EndpointSlice
	calls  []string
	errs   map[string]error
}

func (h *hostRecorder) reconciler(t *testing.T) hostSliceReconciler {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{hostSlicesByService: hostSliceKey})
	for _, s := range h.stored {
		if err := idx.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	r := newHostSliceReconciler(idx, nil)
	call := func(verb, namespace, name string) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.calls = append(h.calls, verb+" "+namespace+"/"+name)
		return h.errs[verb]
	}
	r.create = func(_ context.Context, s *discoveryv1.EndpointSlice) error {
		return call("create", s.Namespace, s.Name)
	}
	r.patch = func(_ context.Context, namespace, name string, patch []byte) error {
		if !json.Valid(patch) {
			return fmt.Errorf("invalid patch %s", patch)
		}
		return call("patch", namespace, name)
	}
	r.delete = func(_ context.Context, s *discoveryv1.EndpointSlice) error {
		if s.UID == "" {
			t.Errorf("delete of %s without the UID precondition", s.Name)
		}
		return call("delete", s.Namespace, s.Name)
	}
	return r
}

func (h *hostRecorder) sortedCalls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.calls)
	sort.Strings(out)
	return out
}

// hostCopy is the host's copy of a member1 slice, as stored.
func hostCopy(t *testing.T, cluster, name, service string, ips ...string) *discoveryv1.EndpointSlice {
	t.Helper()
	s, err := plan.HostSlice(plan.Collected{Cluster: cluster, Slice: memberSlice(name, service, ips...)})
	if err != nil {
		t.Fatal(err)
	}
	s.UID, s.ResourceVersion = "uid-"+s.UID, "9"
	return s
}

func TestHostSliceReconciler(t *testing.T) {
	t.Parallel()
	desired := func(name string, ips ...string) *discoveryv1.EndpointSlice {
		s, err := plan.HostSlice(plan.Collected{Cluster: "member1", Slice: memberSlice(name, "web", ips...)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := hostCopy(t, "member1", "web-a", "web", "10.0.0.1")
	b := hostCopy(t, "member1", "web-b", "web", "10.0.0.2")
	// Copies of other services and members, read through the same cache:
	// never this key's.
	otherService := hostCopy(t, "member1", "db-a", "db", "10.0.0.3")
	otherMember := hostCopy(t, "member2", "web-a", "web", "10.0.0.4")
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ns")
	for _, tc := range []struct {
		name    string
		desired []*discoveryv1.EndpointSlice
		stored  []*discoveryv1.EndpointSlice
		errs    map[string]error
		want    []string
		wantErr bool
	}{
		{name: "new slices: one create each", desired: []*discoveryv1.EndpointSlice{desired("web-a", "10.0.0.1"), desired("web-b")},
			stored: []*discoveryv1.EndpointSlice{otherService, otherMember},
			want:   []string{"create ns/imported-member1-web-a", "create ns/imported-member1-web-b"}},
		{name: "as stored: no write", desired: []*discoveryv1.EndpointSlice{desired("web-a", "10.0.0.1")},
			stored: []*discoveryv1.EndpointSlice{a, otherService, otherMember}},
		{name: "an endpoint changed: one patch", desired: []*discoveryv1.EndpointSlice{desired("web-a", "10.0.0.1", "10.0.0.5"), desired("web-b", "10.0.0.2")},
			stored: []*discoveryv1.EndpointSlice{a, b}, want: []string{"patch ns/imported-member1-web-a"}},
		{name: "nothing desired: this member's copies deleted, no other",
			stored: []*discoveryv1.EndpointSlice{a, b, otherService, otherMember},
			want:   []string{"delete ns/imported-member1-web-a", "delete ns/imported-member1-web-b"}},
		{name: "the name taken by a slice not a copy: left alone", desired: []*discoveryv1.EndpointSlice{desired("web-a")},
			errs: map[string]error{"create": apierrors.NewAlreadyExists(schema.GroupResource{Resource: "endpointslices"}, "imported-member1-web-a")},
			want: []string{"create ns/imported-member1-web-a"}},
		{name: "no such namespace on the host: nothing to do", desired: []*discoveryv1.EndpointSlice{desired("web-a")},
			errs: map[string]error{"create": notFound}, want: []string{"create ns/imported-member1-web-a"}},
		{name: "already deleted: done", stored: []*discoveryv1.EndpointSlice{a},
			errs: map[string]error{"delete": apierrors.NewNotFound(schema.GroupResource{Resource: "endpointslices"}, a.Name)},
			want: []string{"delete ns/imported-member1-web-a"}},
		{name: "a patch fails: the error, the other writes done", desired: []*discoveryv1.EndpointSlice{desired("web-a", "10.0.0.9")},
			stored: []*discoveryv1.EndpointSlice{a, b}, errs: map[string]error{"patch": errBoom},
			want: []string{"delete ns/imported-member1-web-b", "patch ns/imported-member1-web-a"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &hostRecorder{stored: tc.stored, errs: tc.errs}
			r := h.reconciler(t)
			err := r.reconcile(context.Background(), "member1", "ns", "web", tc.desired)
			if (err != nil) != tc.wantErr {
				t.Errorf("error %v, want error %v", err, tc.wantErr)
			}
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if got := h.sortedCalls(); !slices.Equal(got, want) {
				t.Errorf("writes %v, want %v", got, want)
			}
		})
	}
}

// TestHostSliceReconcilerReadsItsWrites: a copy patched is read back as
// written while the informer has not seen the patch yet, so the next pass
// of the same change writes nothing.
func TestHostSliceReconcilerReadsItsWrites(t *testing.T) {
	t.Parallel()
	stale := hostCopy(t, "member1", "web-a", "web", "10.0.0.1")
	stale.ResourceVersion = "5"
	desired, err := plan.HostSlice(plan.Collected{Cluster: "member1", Slice: memberSlice("web-a", "web", "10.0.0.1", "10.0.0.2")})
	if err != nil {
		t.Fatal(err)
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{hostSlicesByService: hostSliceKey})
	if err := idx.Add(stale); err != nil {
		t.Fatal(err)
	}
	host := fake.NewClientset(stale)
	host.PrependReactor("patch", "endpointslices", func(clienttesting.Action) (bool, runtime.Object, error) {
		// The server's answer: the copy as desired, at a later version.
		s := desired.DeepCopy()
		s.UID, s.ResourceVersion = stale.UID, "6"
		return true, s, nil
	})
	r := newHostSliceReconciler(idx, host)
	for range 2 {
		if err := r.reconcile(context.Background(), "member1", "ns", "web", []*discoveryv1.EndpointSlice{desired}); err != nil {
			t.Fatal(err)
		}
	}
	var writes []string
	for _, a := range host.Actions() {
		writes = append(writes, a.GetVerb())
	}
	if !slices.Equal(writes, []string{"patch"}) {
		t.Errorf("writes %v, want one patch", writes)
	}
}
