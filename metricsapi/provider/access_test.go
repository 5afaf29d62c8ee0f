package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	"k8s.io/metrics/pkg/apis/metrics"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	custommetricsclient "k8s.io/metrics/pkg/client/custom_metrics"
	cmprovider "sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	memberaccess "github.com/flotilla-io/flotilla/member/access"
)

// fakeMember is one member's metrics: pods (namespace/name), nodes, and
// the custom metric "qps" of every pod, worth value.
type fakeMember struct {
	pods  []string
	nodes []string
	value int64
	err   error // every metrics call fails with it
}

// fakeMembers implements Members over fixed members.
type fakeMembers map[string]*fakeMember

var _ Members = fakeMembers{}

func (f fakeMembers) pick(keep func(*fakeMember) bool) []string {
	var out []string
	for name, m := range f {
		if keep(m) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func (f fakeMembers) Clusters() []string { return f.pick(func(*fakeMember) bool { return true }) }

func (f fakeMembers) PodClusters(namespace string, _ labels.Selector) []string {
	return f.pick(func(m *fakeMember) bool {
		return slices.ContainsFunc(m.pods, func(p string) bool { return namespace == "" || strings.HasPrefix(p, namespace+"/") })
	})
}

func (f fakeMembers) PodClustersNamed(namespace, name string) []string {
	return f.pick(func(m *fakeMember) bool { return slices.Contains(m.pods, namespace+"/"+name) })
}

func (f fakeMembers) NodeClusters(labels.Selector) []string {
	return f.pick(func(m *fakeMember) bool { return len(m.nodes) > 0 })
}

func (f fakeMembers) NodeClustersNamed(name string) []string {
	return f.pick(func(m *fakeMember) bool { return slices.Contains(m.nodes, name) })
}

func (f fakeMembers) ResourceMetrics(cluster string) (metricsclient.MetricsV1beta1Interface, error) {
	return fakeResource{m: f[cluster]}, nil
}

func (f fakeMembers) CustomMetrics(cluster string) (custommetricsclient.CustomMetricsClient, error) {
	return fakeCustom{m: f[cluster]}, nil
}

func (f fakeMembers) CustomMetricInfos(context.Context, string) ([]cmprovider.CustomMetricInfo, error) {
	return nil, nil
}

// fakeResource serves a member's metrics.k8s.io; methods the providers do
// not call panic through the nil embedded interfaces.
type fakeResource struct {
	metricsclient.MetricsV1beta1Interface
	m *fakeMember
}

func (r fakeResource) PodMetricses(namespace string) metricsclient.PodMetricsInterface {
	return fakePods{m: r.m, namespace: namespace}
}

func (r fakeResource) NodeMetricses() metricsclient.NodeMetricsInterface { return fakeNodes{m: r.m} }

type fakePods struct {
	metricsclient.PodMetricsInterface
	m         *fakeMember
	namespace string
}

func (p fakePods) List(context.Context, metav1.ListOptions) (*metricsv1beta1.PodMetricsList, error) {
	if p.m.err != nil {
		return nil, p.m.err
	}
	out := &metricsv1beta1.PodMetricsList{}
	for _, key := range p.m.pods {
		ns, name, _ := strings.Cut(key, "/")
		if p.namespace == "" || ns == p.namespace {
			out.Items = append(out.Items, metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		}
	}
	return out, nil
}

func (p fakePods) Get(_ context.Context, name string, _ metav1.GetOptions) (*metricsv1beta1.PodMetrics, error) {
	if p.m.err != nil {
		return nil, p.m.err
	}
	if !slices.Contains(p.m.pods, p.namespace+"/"+name) {
		return nil, apierrors.NewNotFound(metrics.Resource("pods"), name)
	}
	return &metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Namespace: p.namespace, Name: name}}, nil
}

type fakeNodes struct {
	metricsclient.NodeMetricsInterface
	m *fakeMember
}

func (n fakeNodes) List(context.Context, metav1.ListOptions) (*metricsv1beta1.NodeMetricsList, error) {
	if n.m.err != nil {
		return nil, n.m.err
	}
	out := &metricsv1beta1.NodeMetricsList{}
	for _, name := range n.m.nodes {
		out.Items = append(out.Items, metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	return out, nil
}

func (n fakeNodes) Get(_ context.Context, name string, _ metav1.GetOptions) (*metricsv1beta1.NodeMetrics, error) {
	if !slices.Contains(n.m.nodes, name) {
		return nil, apierrors.NewNotFound(metrics.Resource("nodes"), name)
	}
	return &metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
}

// fakeCustom serves the "qps" metric of a member's pods.
type fakeCustom struct {
	m         *fakeMember
	namespace string
}

func (c fakeCustom) RootScopedMetrics() custommetricsclient.MetricsInterface { return c }

func (c fakeCustom) NamespacedMetrics(namespace string) custommetricsclient.MetricsInterface {
	return fakeCustom{m: c.m, namespace: namespace}
}

func (c fakeCustom) value(name string) custommetricsv1beta2.MetricValue {
	return custommetricsv1beta2.MetricValue{
		DescribedObject: corev1.ObjectReference{Kind: "Pod", Namespace: c.namespace, Name: name},
		Metric:          custommetricsv1beta2.MetricIdentifier{Name: "qps"},
		Value:           *resource.NewQuantity(c.m.value, resource.DecimalSI),
	}
}

func (c fakeCustom) GetForObject(_ schema.GroupKind, name, _ string, _ labels.Selector) (*custommetricsv1beta2.MetricValue, error) {
	if !slices.Contains(c.m.pods, c.namespace+"/"+name) {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
	}
	v := c.value(name)
	return &v, nil
}

func (c fakeCustom) GetForObjects(schema.GroupKind, labels.Selector, string, labels.Selector) (*custommetricsv1beta2.MetricValueList, error) {
	out := &custommetricsv1beta2.MetricValueList{}
	for _, key := range c.m.pods {
		if ns, name, _ := strings.Cut(key, "/"); ns == c.namespace {
			out.Items = append(out.Items, c.value(name))
		}
	}
	return out, nil
}

// hostAllows is the control plane's authorizer: tom may reach the clusters
// named through clusters/{name}/proxy, nothing else.
type hostAllows []string

func (h hostAllows) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == "tom" && a.GetVerb() == "get" && a.GetAPIGroup() == "cluster.karmada.io" &&
		a.GetResource() == "clusters" && a.GetSubresource() == "proxy" && slices.Contains(h, a.GetName()) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionDeny, "", nil
}

// grant is one RBAC rule of a member for tom: an empty namespace is
// cluster-wide (a ClusterRoleBinding), an empty name any name.
type grant struct{ verb, group, resource, subresource, namespace, name string }

func (g grant) covers(ra *authorizationv1.ResourceAttributes) bool {
	return g.verb == ra.Verb && g.group == ra.Group && g.resource == ra.Resource && g.subresource == ra.Subresource &&
		(g.namespace == "" || g.namespace == ra.Namespace) && (g.name == "" || g.name == ra.Name)
}

// memberRBAC reviews access in the members with their grants.
func memberRBAC(grants map[string][]grant) memberaccess.Reviewer {
	return func(_ context.Context, cluster string, sar *authorizationv1.SubjectAccessReview) (bool, error) {
		if sar.Spec.User != "tom" {
			return false, nil
		}
		return slices.ContainsFunc(grants[cluster], func(g grant) bool { return g.covers(sar.Spec.ResourceAttributes) }), nil
	}
}

var (
	listPods = func(ns string) grant {
		return grant{verb: "list", group: "metrics.k8s.io", resource: "pods", namespace: ns}
	}
	getPods = func(ns string) grant {
		return grant{verb: "get", group: "metrics.k8s.io", resource: "pods", namespace: ns}
	}
	listNodes = grant{verb: "list", group: "metrics.k8s.io", resource: "nodes"}
	getNodes  = grant{verb: "get", group: "metrics.k8s.io", resource: "nodes"}
	qps       = func(ns string) grant {
		return grant{verb: "get", group: "custom.metrics.k8s.io", resource: "pods", subresource: "qps", namespace: ns}
	}
	everything = []grant{listPods(""), getPods(""), listNodes, getNodes, qps("")}
)

// members: pod a/web is in both clusters; m3 is readable by nobody and fails.
func testMembers() fakeMembers {
	return fakeMembers{
		"m1": {pods: []string{"a/p1", "a/web", "b/p2"}, nodes: []string{"n1"}, value: 1},
		"m2": {pods: []string{"a/q1", "a/web", "b/q2"}, nodes: []string{"n2"}, value: 10},
		"m3": {pods: []string{"a/secret"}, nodes: []string{"n3"}, err: errors.New("m3 is down")},
	}
}

type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func TestMetricsOnlyWhatTheCallerMayRead(t *testing.T) {
	t.Parallel()
	both := hostAllows{"m1", "m2"}
	all := map[string][]grant{"m1": everything, "m2": everything, "m3": everything}
	tests := []struct {
		name    string
		host    hostAllows
		grants  map[string][]grant // nil: the member check is off
		noUser  bool
		op      string // podList, podGet, nodeList, nodeGet, customBySelector, customByName
		ns, obj string
		want    []string // cluster/namespace/name, or the summed custom value
		wantErr func(error) bool
	}{
		{name: "pods, all allowed", host: both, grants: all, op: "podList", ns: "a",
			want: []string{"m1/a/p1", "m2/a/q1", "m1/a/web", "m2/a/web"}},
		{name: "pods, the control plane allows m1 only", host: hostAllows{"m1"}, grants: all, op: "podList", ns: "a",
			want: []string{"m1/a/p1", "m1/a/web"}},
		{name: "pods, m2 allows namespace b only", host: both,
			grants: map[string][]grant{"m1": everything, "m2": {listPods("b")}}, op: "podList", ns: "a",
			want: []string{"m1/a/p1", "m1/a/web"}},
		{name: "pods, namespace grant in that namespace", host: both,
			grants: map[string][]grant{"m1": everything, "m2": {listPods("b")}}, op: "podList", ns: "b",
			want: []string{"m1/b/p2", "m2/b/q2"}},
		{name: "pods of all namespaces need a cluster-wide grant", host: both,
			grants: map[string][]grant{"m1": everything, "m2": {listPods("a"), listPods("b")}}, op: "podList",
			want: []string{"m1/a/p1", "m1/a/web", "m1/b/p2"}},
		{name: "pods, core pods are not metrics", host: both,
			grants: map[string][]grant{"m1": {{verb: "list", resource: "pods"}}, "m2": everything}, op: "podList", ns: "a",
			want: []string{"m2/a/q1", "m2/a/web"}},
		{name: "pods, get does not allow list", host: both,
			grants: map[string][]grant{"m1": {getPods("")}, "m2": {getPods("")}}, op: "podList", ns: "a", want: []string{}},
		{name: "pods, nothing allowed", host: hostAllows{}, grants: all, op: "podList", ns: "a", want: []string{}},
		{name: "pods, no user", noUser: true, host: both, grants: all, op: "podList", ns: "a", want: []string{}},
		{name: "pods, member check off: the control plane decides", host: hostAllows{"m2"}, op: "podList", ns: "a",
			want: []string{"m2/a/q1", "m2/a/web"}},
		{name: "pod get, first cluster denied", host: both, grants: map[string][]grant{"m1": {listPods("")}, "m2": everything},
			op: "podGet", ns: "a", obj: "web", want: []string{"m2/a/web"}},
		{name: "pod get, denied everywhere", host: both, grants: map[string][]grant{"m1": {listPods("")}, "m2": {getPods("b")}},
			op: "podGet", ns: "a", obj: "web", wantErr: apierrors.IsNotFound},
		{name: "pod get, cluster not allowed", host: hostAllows{"m1"}, grants: all, op: "podGet", ns: "a", obj: "q1",
			wantErr: apierrors.IsNotFound},
		{name: "nodes, all allowed", host: hostAllows{"m1", "m2", "m3"}, grants: all, op: "nodeList", want: []string{"m1//n1", "m2//n2"}},
		{name: "nodes, m1 grants pods only", host: both, grants: map[string][]grant{"m1": {listPods("")}, "m2": everything},
			op: "nodeList", want: []string{"m2//n2"}},
		{name: "nodes, nothing allowed", host: both, grants: map[string][]grant{}, op: "nodeList", want: []string{}},
		{name: "node get, denied", host: both, grants: map[string][]grant{"m1": {listNodes}, "m2": everything},
			op: "nodeGet", obj: "n1", wantErr: apierrors.IsNotFound},
		{name: "node get, allowed", host: both, grants: all, op: "nodeGet", obj: "n1", want: []string{"m1//n1"}},
		{name: "custom by selector, all allowed", host: both, grants: all, op: "customBySelector", ns: "a",
			want: []string{"a/p1=1", "a/q1=10", "a/web=11"}},
		{name: "custom by selector, m1 not allowed", host: hostAllows{"m2"}, grants: all, op: "customBySelector", ns: "a",
			want: []string{"a/q1=10", "a/web=10"}},
		{name: "custom by selector, m2 grants namespace b only", host: both,
			grants: map[string][]grant{"m1": everything, "m2": {qps("b")}}, op: "customBySelector", ns: "a",
			want: []string{"a/p1=1", "a/web=1"}},
		{name: "custom by selector, nothing allowed", host: hostAllows{}, grants: all, op: "customBySelector", ns: "a", want: []string{}},
		{name: "custom by name, summed over allowed members", host: both, grants: map[string][]grant{"m1": everything, "m2": {qps("a")}},
			op: "customByName", ns: "a", obj: "web", want: []string{"11"}},
		{name: "custom by name, m2 only", host: both, grants: map[string][]grant{"m2": everything},
			op: "customByName", ns: "a", obj: "web", want: []string{"10"}},
		{name: "custom by name, nothing allowed", host: both, grants: map[string][]grant{},
			op: "customByName", ns: "a", obj: "web", wantErr: apierrors.IsNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			access := &memberaccess.Checker{Host: tc.host}
			if tc.grants != nil {
				access.MemberReview = memberRBAC(tc.grants)
			}
			w := &warnings{}
			ctx := warning.WithWarningRecorder(context.Background(), w)
			if !tc.noUser {
				ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "tom", Groups: []string{"devs"}})
			}
			ctx = genericapirequest.WithNamespace(ctx, tc.ns)
			got, err := runOp(ctx, testMembers(), access, tc.op, tc.ns, tc.obj)
			if tc.wantErr != nil {
				if !tc.wantErr(err) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			// m3 is readable by nobody here: its failure must not show.
			for _, text := range w.list {
				if strings.Contains(text, "m3") && !slices.Contains(tc.host, "m3") {
					t.Errorf("warning names a cluster the caller may not read: %q", text)
				}
			}
		})
	}
}

// runOp runs one provider call and returns what it answered, sorted.
func runOp(ctx context.Context, members fakeMembers, access *memberaccess.Checker, op, ns, obj string) ([]string, error) {
	pods := &PodMetrics{Members: members, Timeout: timeout, Access: access}
	nodes := &NodeMetrics{Members: members, Timeout: timeout, Access: access}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, meta.RESTScopeNamespace)
	custom := &Custom{Members: members, Timeout: timeout, Access: access, Mapper: mapper}
	info := cmprovider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: "qps"}

	out := []string{}
	var obj0 runtime.Object
	var err error
	switch op {
	case "podList":
		obj0, err = pods.List(ctx, &metainternalversion.ListOptions{})
	case "podGet":
		obj0, err = pods.Get(ctx, obj, &metav1.GetOptions{})
	case "nodeList":
		obj0, err = nodes.List(ctx, &metainternalversion.ListOptions{})
	case "nodeGet":
		obj0, err = nodes.Get(ctx, obj, &metav1.GetOptions{})
	case "customBySelector":
		var l *custom_metrics.MetricValueList
		if l, err = custom.GetMetricBySelector(ctx, ns, labels.Everything(), info, labels.Everything()); err != nil {
			return nil, err
		}
		for _, v := range l.Items {
			out = append(out, fmt.Sprintf("%s/%s=%s", v.DescribedObject.Namespace, v.DescribedObject.Name, v.Value.String()))
		}
		slices.Sort(out)
		return out, nil
	case "customByName":
		var v *custom_metrics.MetricValue
		if v, err = custom.GetMetricByName(ctx, types.NamespacedName{Namespace: ns, Name: obj}, info, labels.Everything()); err != nil {
			return nil, err
		}
		return []string{v.Value.String()}, nil
	default:
		return nil, fmt.Errorf("unknown op %q", op)
	}
	if err != nil {
		return nil, err
	}
	add := func(m metav1.ObjectMeta) {
		out = append(out, m.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey]+"/"+m.Namespace+"/"+m.Name)
	}
	switch o := obj0.(type) {
	case *metrics.PodMetricsList:
		for _, it := range o.Items {
			add(it.ObjectMeta)
		}
	case *metrics.PodMetrics:
		add(o.ObjectMeta)
	case *metrics.NodeMetricsList:
		for _, it := range o.Items {
			add(it.ObjectMeta)
		}
	case *metrics.NodeMetrics:
		add(o.ObjectMeta)
	}
	return out, nil
}

// timeout is each member's deadline; the fakes answer at once.
const timeout = 5 * time.Second
