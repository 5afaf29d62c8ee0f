package top

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	metricsapi "k8s.io/metrics/pkg/apis/metrics"
	metricsv1beta1api "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"
)

// fakeMember is a member's pods and nodes with their metrics; pods whose
// name starts with "new" have none.
type fakeMember struct {
	pods  []corev1.Pod
	nodes []corev1.Node
	// noMetricsAPI: the member does not serve metrics.k8s.io.
	noMetricsAPI bool
}

type fakeSource map[string]fakeMember

func (s fakeSource) Clusters(_ context.Context, names []string) ([]string, error) {
	if len(names) == 0 {
		for n := range s {
			names = append(names, n)
		}
		sortStrings(names)
		return names, nil
	}
	for _, n := range names {
		if _, ok := s[n]; !ok && n != "down" {
			return nil, fmt.Errorf("cluster %q not found", n)
		}
	}
	return names, nil
}

func (s fakeSource) Member(cluster string) (Member, error) {
	if cluster == "down" {
		return Member{}, errors.New("connection refused")
	}
	fm := s[cluster]
	var objs []runtime.Object
	for i := range fm.pods {
		objs = append(objs, &fm.pods[i])
	}
	for i := range fm.nodes {
		objs = append(objs, &fm.nodes[i])
	}
	kube := kubefake.NewClientset(objs...)
	metricsAPI := func(context.Context) error { return nil }
	if fm.noMetricsAPI {
		metricsAPI = func(context.Context) error { return errMetricsAPI }
	}
	metrics := metricsfake.NewSimpleClientset()
	podMetrics := func(p corev1.Pod) metricsv1beta1api.PodMetrics {
		return metricsv1beta1api.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			Containers: []metricsv1beta1api.ContainerMetrics{{Name: "app", Usage: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(p.Annotations["cpu"]), corev1.ResourceMemory: resource.MustParse("64Mi")}}}}
	}
	metrics.PrependReactor("*", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		switch a := a.(type) {
		case clienttesting.GetAction:
			for _, p := range fm.pods {
				if p.Name == a.GetName() && p.Namespace == a.GetNamespace() && !strings.HasPrefix(p.Name, "new") {
					pm := podMetrics(p)
					return true, &pm, nil
				}
			}
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "metrics.k8s.io", Resource: "pods"}, a.GetNamespace()+"/"+a.GetName())
		case clienttesting.ListAction:
			list := &metricsv1beta1api.PodMetricsList{}
			for _, p := range fm.pods {
				if (a.GetNamespace() == "" || p.Namespace == a.GetNamespace()) && !strings.HasPrefix(p.Name, "new") {
					list.Items = append(list.Items, podMetrics(p))
				}
			}
			return true, list, nil
		}
		return false, nil, nil
	})
	metrics.PrependReactor("list", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		list := &metricsv1beta1api.NodeMetricsList{}
		for _, n := range fm.nodes {
			if n.Name != "quiet" {
				list.Items = append(list.Items, metricsv1beta1api.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: n.Name},
					Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}})
			}
		}
		return true, list, nil
	})
	return Member{Metrics: metrics.MetricsV1beta1(), Core: kube.CoreV1(), MetricsAPI: metricsAPI}, nil
}

func pod(ns, name, cpu string, age time.Duration) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{"cpu": cpu},
		CreationTimestamp: metav1.NewTime(time.Now().Add(-age))}}
}

func node(name string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}}}
}

func testbed() fakeSource {
	return fakeSource{
		"member1": {pods: []corev1.Pod{pod("default", "web", "100m", time.Hour), pod("other", "db", "300m", time.Hour)},
			nodes: []corev1.Node{node("n1"), node("quiet")}},
		"member2": {pods: []corev1.Pod{pod("default", "web", "20m", time.Hour), pod("default", "api", "5m", time.Hour)},
			nodes: []corev1.Node{node("n1")}},
	}
}

func TestPods(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		src      fakeSource
		clusters []string
		o        PodOptions
		want     string
		wantErr  []string
		wantInfo string
	}{
		{name: "every member", src: testbed(), o: PodOptions{Namespace: "default"}, want: `
NAME   CLUSTER   CPU(cores)   MEMORY(bytes)
api    member2   5m           64Mi
web    member1   100m         64Mi
web    member2   20m          64Mi
`},
		{name: "-A sorted by cpu", src: testbed(), o: PodOptions{AllNamespaces: true, SortBy: SortByCPU}, want: `
NAMESPACE   NAME   CLUSTER   CPU(cores)   MEMORY(bytes)
other       db     member1   300m         64Mi
default     web    member1   100m         64Mi
default     web    member2   20m          64Mi
default     api    member2   5m           64Mi
`},
		{name: "-C with containers and sum", src: testbed(), clusters: []string{"member2"}, o: PodOptions{Namespace: "default", Containers: true, Sum: true}, want: `
POD   NAME   CLUSTER   CPU(cores)   MEMORY(bytes)
api   app    member2   5m           64Mi
web   app    member2   20m          64Mi
                       ________     ________
                       25m          128Mi
`},
		{name: "a named pod is looked for in every member", src: testbed(), o: PodOptions{Namespace: "default", Name: "api", NoHeaders: true}, want: `
api   member2   5m    64Mi
`},
		{name: "a named pod no member has", src: testbed(), o: PodOptions{Namespace: "default", Name: "ghost"},
			wantErr: []string{`cluster(member1): pods "ghost" not found`, `cluster(member2): pods "ghost" not found`}},
		{name: "a named pod missing from the named member", src: testbed(), clusters: []string{"member1"}, o: PodOptions{Namespace: "default", Name: "api"},
			wantErr: []string{`cluster(member1): pods "api" not found`}},
		{name: "a member down", src: testbed(), clusters: []string{"member2", "down"}, o: PodOptions{Namespace: "default", NoHeaders: true},
			want: `
api   member2   5m    64Mi
web   member2   20m   64Mi
`, wantErr: []string{"cluster(down): connection refused"}},
		{name: "no metrics API", src: fakeSource{"member3": {noMetricsAPI: true}}, o: PodOptions{Namespace: "default"},
			wantErr: []string{"cluster(member3): metrics API not available"}},
		{name: "new pods", src: fakeSource{"member3": {pods: []corev1.Pod{pod("default", "new", "1m", time.Second)}}}, o: PodOptions{Namespace: "default"},
			wantErr: []string{"cluster(member3): metrics not available yet"}},
		{name: "old pods without metrics", src: fakeSource{"member3": {pods: []corev1.Pod{pod("default", "newish", "1m", time.Hour)}}}, o: PodOptions{Namespace: "default"},
			wantErr: []string{"cluster(member3): metrics not available for pod default/newish, age: 1h0m0s"}},
		{name: "no pods", src: testbed(), o: PodOptions{Namespace: "empty"}, wantInfo: "No resources found in empty namespace.\n"},
		{name: "bad sort", src: testbed(), o: PodOptions{SortBy: "name"}, wantErr: []string{"--sort-by accepts only cpu or memory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := Pods(t.Context(), tc.src, tc.clusters, tc.o, &out, &errOut)
			checkRun(t, out.String(), errOut.String(), err, strings.TrimPrefix(tc.want, "\n"), tc.wantInfo, tc.wantErr)
		})
	}
}

func TestNodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		clusters []string
		o        NodeOptions
		want     string
		wantErr  []string
	}{
		{name: "every member", want: `
NAME    CLUSTER   CPU(cores)   CPU%        MEMORY(bytes)   MEMORY%
n1      member1   500m         25%         1024Mi          25%
n1      member2   500m         25%         1024Mi          25%
quiet   member1   <unknown>    <unknown>   <unknown>       <unknown>
`},
		{name: "-C", clusters: []string{"member2"}, o: NodeOptions{NoHeaders: true}, want: `
n1    member2   500m   25%   1024Mi   25%
`},
		{name: "unknown node", o: NodeOptions{Name: "n9"}, wantErr: []string{`cluster(member1): nodes "n9" not found`, `cluster(member2): nodes "n9" not found`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := Nodes(t.Context(), testbed(), tc.clusters, tc.o, &out, &errOut)
			checkRun(t, out.String(), errOut.String(), err, strings.TrimPrefix(tc.want, "\n"), "", tc.wantErr)
		})
	}
}

func checkRun(t *testing.T, out, errOut string, err error, want, wantInfo string, wantErr []string) {
	t.Helper()
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if errOut != wantInfo {
		t.Errorf("stderr %q, want %q", errOut, wantInfo)
	}
	if len(wantErr) == 0 && err != nil {
		t.Errorf("error %v", err)
	}
	if len(wantErr) > 0 && err == nil {
		t.Errorf("no error, want %q", wantErr)
	}
	if err != nil && len(strings.Split(err.Error(), "\n")) != len(wantErr) {
		t.Errorf("error %q, want exactly %q", err, wantErr)
	}
	for _, w := range wantErr {
		if err != nil && !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "x")
	for _, tc := range []struct {
		name      string
		answers   []answer[string]
		anyMember bool
		want      []string
		wantErr   string
	}{
		{name: "all answer", answers: []answer[string]{{cluster: "m1", rows: []string{"a"}}, {cluster: "m2", rows: []string{"b"}}}, want: []string{"a", "b"}},
		{name: "one fails", answers: []answer[string]{{cluster: "m1", rows: []string{"a"}}, {cluster: "m2", err: errors.New("boom")}}, want: []string{"a"}, wantErr: "cluster(m2): boom"},
		{name: "found in one of any", anyMember: true, answers: []answer[string]{{cluster: "m1", err: notFound}, {cluster: "m2", rows: []string{"x"}}}, want: []string{"x"}},
		{name: "not found in a named member", answers: []answer[string]{{cluster: "m1", err: notFound}, {cluster: "m2", rows: []string{"x"}}}, want: []string{"x"}, wantErr: `cluster(m1): pods "x" not found`},
		{name: "found nowhere", anyMember: true, answers: []answer[string]{{cluster: "m1", err: notFound}}, wantErr: `cluster(m1): pods "x" not found`},
		{name: "other errors stay", anyMember: true, answers: []answer[string]{{cluster: "m1", err: errors.New("boom")}, {cluster: "m2", rows: []string{"x"}}}, want: []string{"x"}, wantErr: "cluster(m1): boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := merge(tc.answers, tc.anyMember, apierrors.IsNotFound)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestContainersSorted(t *testing.T) {
	t.Parallel()
	cs := []metricsapi.ContainerMetrics{
		{Name: "b", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("3Mi")}},
		{Name: "a", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2m"), corev1.ResourceMemory: resource.MustParse("1Mi")}},
	}
	names := func(cs []metricsapi.ContainerMetrics) string {
		var n []string
		for _, c := range cs {
			n = append(n, c.Name)
		}
		return strings.Join(n, ",")
	}
	for sortBy, want := range map[string]string{"": "a,b", SortByCPU: "a,b", SortByMemory: "b,a"} {
		if got := names(containersSorted(cs, sortBy)); got != want {
			t.Errorf("sort by %q: %s, want %s", sortBy, got, want)
		}
	}
	if names(cs) != "b,a" {
		t.Error("containersSorted changed its input")
	}
}

func sortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}
