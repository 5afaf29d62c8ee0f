package mcs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// recorder is a fake worksWriter over an in-memory store of Works.
type recorder struct {
	mu      sync.Mutex
	works   map[string]*workv1alpha1.Work
	calls   []string
	failAll error
}

func newRecorder(ws ...*workv1alpha1.Work) *recorder {
	r := &recorder{works: map[string]*workv1alpha1.Work{}}
	for _, w := range ws {
		r.works[w.Namespace+"/"+w.Name] = w
	}
	return r
}

func (r *recorder) writer() worksWriter {
	return worksWriter{
		create: func(_ context.Context, w *workv1alpha1.Work) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.failAll != nil {
				return r.failAll
			}
			r.calls = append(r.calls, "create "+w.Namespace+"/"+w.Name)
			return nil
		},
		patch: func(_ context.Context, namespace, name string, patch []byte) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.failAll != nil {
				return r.failAll
			}
			if !json.Valid(patch) {
				return fmt.Errorf("invalid patch %s", patch)
			}
			r.calls = append(r.calls, "patch "+namespace+"/"+name)
			return nil
		},
		delete: func(_ context.Context, w *workv1alpha1.Work) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.failAll != nil {
				return r.failAll
			}
			r.calls = append(r.calls, "delete "+w.Namespace+"/"+w.Name)
			return nil
		},
	}
}

func (r *recorder) sortedCalls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.calls)
	sort.Strings(out)
	return out
}

// byService and byName read r's store as the Work index does.
func (r *recorder) byService(namespace, name string) ([]*workv1alpha1.Work, error) {
	var out []*workv1alpha1.Work
	for _, w := range r.works {
		if serviceKeyOf(w) == namespace+"/"+name {
			out = append(out, w)
		}
	}
	return out, nil
}

func (r *recorder) byName(namespace, name string) (*workv1alpha1.Work, bool) {
	w, ok := r.works[namespace+"/"+name]
	return w, ok
}

// asStored is w as flotilla-apiserver stores it.
func asStored(t *testing.T, w *workv1alpha1.Work) *workv1alpha1.Work {
	t.Helper()
	s := w.DeepCopy()
	if err := mutation.MutateWork(s, true); err != nil {
		t.Fatal(err)
	}
	s.ResourceVersion, s.UID = "5", types.UID("uid-"+s.Name)
	if len(s.Finalizers) == 0 && s.Labels[workv1alpha1.PropagationInstruction] == "" {
		s.Finalizers = []string{workv1alpha1.ExecutionControllerFinalizer}
	}
	return s
}

func testCluster(name string, ready bool, served ...string) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status}}
	var res []clusterv1alpha1.APIResource
	for _, r := range served {
		res = append(res, clusterv1alpha1.APIResource{Name: r})
	}
	if len(res) > 0 {
		c.Status.APIEnablements = []clusterv1alpha1.APIEnablement{{GroupVersion: "multicluster.x-k8s.io/v1alpha1", Resources: res}}
	}
	return c
}

func memberSlice(name, service string, ips ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
		"ports": []any{map[string]any{"name": "http", "port": int64(80), "protocol": "TCP"}},
	}}
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetLabels(map[string]string{"kubernetes.io/service-name": service})
	var eps []any
	for _, ip := range ips {
		eps = append(eps, map[string]any{"addresses": []any{ip}, "conditions": map[string]any{"ready": true}})
	}
	u.Object["endpoints"] = eps
	return u
}

var errBoom = errors.New("boom")
