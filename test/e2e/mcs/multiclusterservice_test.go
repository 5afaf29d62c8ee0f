package mcs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// web is a Deployment web of replicas in member1 only, and its Service,
// which no policy selects: a MultiClusterService propagates it.
func web(ns string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s, labels: {app: web}}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx:1.27, ports: [{containerPort: 80}], resources: {requests: {cpu: 10m, memory: 16Mi}}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns, replicas)
}

const webService = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: %s}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 80}]
`

// crossCluster is a CrossCluster MultiClusterService web from providers
// to consumers.
func crossCluster(ns string, providers, consumers []string) string {
	sel := func(cs []string) string {
		var out []string
		for _, c := range cs {
			out = append(out, "{name: "+c+"}")
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	return fmt.Sprintf(`apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata: {name: web, namespace: %s}
spec:
  types: [CrossCluster]
  providerClusters: %s
  consumerClusters: %s
`, ns, sel(providers), sel(consumers))
}

// mciRefused: a MultiClusterIngress is validated as an Ingress is.
func mciRefused(t *testing.T, ns string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "mci.yaml")
	m := fmt.Sprintf(`apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {name: web, namespace: %s}
spec:
  rules:
  - host: "*.*.example.com"
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
`, ns)
	if err := os.WriteFile(f, []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := framework.Kubectl(t, "apply", "-f", f); err == nil || !strings.Contains(out, "spec.rules[0].host") {
		t.Errorf("a MultiClusterIngress with host *.*.example.com: %v, %s; want refused naming spec.rules[0].host", err, out)
	}
	framework.Apply(t, strings.Replace(m, "*.*.example.com", "web.example.com", 1))
}

// dispatchedIPs returns the ready endpoints of the EndpointSlices of
// Service web that Flotilla dispatched to member, as "<pod>=<address>",
// and the slices' names.
func dispatchedIPs(ctx context.Context, t *testing.T, member, ns string) (ips, names []string, err error) {
	list, err := framework.MemberClient(t, member).DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web," +
		"endpointslice.kubernetes.io/managed-by=endpointslice-dispatch-controller.karmada.io"})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range list.Items {
		names = append(names, s.Name)
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || ep.TargetRef == nil {
				continue
			}
			for _, a := range ep.Addresses {
				ips = append(ips, ep.TargetRef.Name+"="+a)
			}
		}
	}
	sort.Strings(ips)
	return ips, names, nil
}

// readyWebPods waits until member has want Ready pods of web in ns and
// returns them as "<pod>=<IP>".
func readyWebPods(t *testing.T, member, ns string, want int) []string {
	t.Helper()
	var out []string
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		var err error
		if out, err = readyPodsOf(ctx, t, member, ns, "web"); err != nil {
			return err.Error()
		}
		if len(out) != want {
			return fmt.Sprintf("%s runs %d Ready web pods, want %d", member, len(out), want)
		}
		return ""
	})
	return out
}

// waitDispatched waits until member's dispatched slices of web list want.
func waitDispatched(t *testing.T, member, ns string, want []string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, func(ctx context.Context) string {
		got, names, err := dispatchedIPs(ctx, t, member, ns)
		if err != nil {
			return err.Error()
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("%s's dispatched EndpointSlices %v of web list %v, want %v", member, names, got, want)
		}
		return ""
	})
}

// waitCondition waits until MultiClusterService ns/web's condition typ has
// status and a message containing each of msgs.
func waitCondition(t *testing.T, ns, typ string, status metav1.ConditionStatus, msgs ...string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		m, err := framework.Karmada(t).NetworkingV1alpha1().MultiClusterServices(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(m.Status.Conditions, typ)
		if c == nil || c.Status != status {
			return fmt.Sprintf("condition %s is %+v, want status %s", typ, c, status)
		}
		for _, msg := range msgs {
			if !strings.Contains(c.Message, msg) {
				return fmt.Sprintf("condition %s message %q does not say %q", typ, c.Message, msg)
			}
		}
		return ""
	})
}

// waitEvent waits for an event of reason on MultiClusterService ns/web
// whose message contains msg.
func waitEvent(t *testing.T, ns, reason, msg string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		evs, err := framework.HostClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=MultiClusterService,involvedObject.name=web,reason=" + reason})
		if err != nil {
			return err.Error()
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, msg) {
				return ""
			}
		}
		return fmt.Sprintf("no %s event saying %q on MultiClusterService web (%d of that reason)", reason, msg, len(evs.Items))
	})
}

// TestMultiClusterServiceCrossCluster: a MultiClusterService
// from member1 to member2, without any ServiceImport, propagates the
// Service to both and gives member2 member1's endpoints as Karmada names
// them, following a scale-up; member3 gets nothing; deleting it takes the
// endpoints back and leaves the Service.
func TestMultiClusterServiceCrossCluster(t *testing.T) {
	ns := framework.Namespace(t, "mcs-cross")
	framework.Apply(t, web(ns, 2)+"---\n"+fmt.Sprintf(webService, ns)+"---\n"+crossCluster(ns, []string{"member1"}, []string{"member2"}))

	ips := readyWebPods(t, "member1", ns, 2)
	waitDispatched(t, "member2", ns, ips, 90*time.Second)
	_, names, err := dispatchedIPs(t.Context(), t, "member2", ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "member1-web-") {
			t.Errorf("member2's dispatched slice %s is not named member1-<slice>", n)
		}
	}
	waitCondition(t, ns, "ServiceApplied", metav1.ConditionTrue, "Service is propagated to target clusters.")
	waitCondition(t, ns, "EndpointSliceDispatched", metav1.ConditionTrue)
	waitEvent(t, ns, "SyncServiceSucceed", "Service is propagated")

	// The Service runs in both, claimed by the MultiClusterService, through
	// a binding of its own; member3, neither provider nor consumer, has none.
	for _, m := range []string{"member1", "member2"} {
		if _, err := framework.MemberClient(t, m).CoreV1().Services(ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil {
			t.Errorf("Service web in %s: %v", m, err)
		}
	}
	if _, err := framework.MemberClient(t, "member3").CoreV1().Services(ns).Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member3 has Service web (err %v): it is no provider or consumer", err)
	}
	svc, err := framework.HostClient(t).CoreV1().Services(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || svc.Labels["resourcetemplate.karmada.io/claimed-by"] != "MultiClusterService" {
		t.Errorf("Service template web: labels %v (%v), want claimed by MultiClusterService", svc.Labels, err)
	}
	rb, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "web-service", metav1.GetOptions{})
	if err != nil || rb.Labels["binding.karmada.io/managed-by"] != "MultiClusterService" {
		t.Fatalf("binding web-service: %v (%v)", rb, err)
	}
	if got := rb.Spec.Placement.ClusterAffinity.ClusterNames; !slices.Equal(got, []string{"member1", "member2"}) {
		t.Errorf("binding web-service places the Service on %v, want [member1 member2]", got)
	}

	// A scale-up: the new pods' addresses follow.
	kubectl(t, "-n", ns, "scale", "deployment", "web", "--replicas=4")
	ips = readyWebPods(t, "member1", ns, 4)
	waitDispatched(t, "member2", ns, ips, follow)

	// Deleted: member2's endpoints go, the Service stays (as a policy's
	// binding does when the policy goes), unclaimed.
	kubectl(t, "-n", ns, "delete", "multiclusterservice", "web", "--wait=true", "--timeout=60s")
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		_, names, err := dispatchedIPs(ctx, t, "member2", ns)
		if err != nil {
			return err.Error()
		}
		if len(names) > 0 {
			return fmt.Sprintf("member2 keeps dispatched EndpointSlices %v", names)
		}
		w, err := works(ctx, t, ns, "web", "MultiClusterService")
		if err != nil {
			return err.Error()
		}
		if len(w) > 0 {
			return fmt.Sprintf("Works of the MultiClusterService remain: %v", w)
		}
		return ""
	})
	svc, err = framework.HostClient(t).CoreV1().Services(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || svc.Labels["resourcetemplate.karmada.io/claimed-by"] != "" {
		t.Errorf("Service template web after the MultiClusterService went: labels %v (%v), want unclaimed", svc.Labels, err)
	}
	if _, err := framework.MemberClient(t, "member2").CoreV1().Services(ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil {
		t.Errorf("Service web went from member2 with the MultiClusterService: %v", err)
	}
}

// TestMultiClusterServiceAllConsumers: no consumerClusters means every
// cluster: member2 and member3 (a Pull member, applied by its agent) get
// member1's endpoints, member1 none of its own, and the Service runs in
// all three.
func TestMultiClusterServiceAllConsumers(t *testing.T) {
	pullMember3(t)
	ns := framework.Namespace(t, "mcs-all")
	framework.Apply(t, web(ns, 2)+"---\n"+fmt.Sprintf(webService, ns)+"---\n"+crossCluster(ns, []string{"member1"}, nil))

	ips := readyWebPods(t, "member1", ns, 2)
	for _, m := range []string{"member2", "member3"} {
		waitDispatched(t, m, ns, ips, 90*time.Second)
	}
	waitCondition(t, ns, "EndpointSliceDispatched", metav1.ConditionTrue)
	if _, names, err := dispatchedIPs(t.Context(), t, "member1", ns); err != nil || len(names) > 0 {
		t.Errorf("member1 was given EndpointSlices %v (%v): its own endpoints are its own", names, err)
	}
	rb, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "web-service", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rb.Spec.Placement.ClusterAffinity.ClusterNames; !slices.Equal(got, []string{"member1", "member2", "member3"}) {
		t.Errorf("binding web-service places the Service on %v, want every cluster", got)
	}
	kubectl(t, "-n", ns, "scale", "deployment", "web", "--replicas=3")
	ips = readyWebPods(t, "member1", ns, 3)
	waitDispatched(t, "member3", ns, ips, follow)
}

// TestMultiClusterServiceBadInput: a MultiClusterService whose
// Service does not exist yet and that names a cluster that does not exist
// says so in its conditions and events, and does what it can; fixed, it
// says all is well. Invalid ones are refused with field errors.
func TestMultiClusterServiceBadInput(t *testing.T) {
	ns := framework.Namespace(t, "mcs-bad")
	framework.Apply(t, web(ns, 1)+"---\n"+crossCluster(ns, []string{"member1"}, []string{"member2", "member9"}))

	waitCondition(t, ns, "ServiceApplied", metav1.ConditionFalse, "Service "+ns+"/web is not found", "Consumer cluster member9 is not found")
	waitCondition(t, ns, "EndpointSliceDispatched", metav1.ConditionFalse, "Consumer cluster member9 is not found")
	waitEvent(t, ns, "ClusterNotFound", "Consumer cluster member9 is not found")
	waitEvent(t, ns, "SyncServiceFailed", "Service "+ns+"/web is not found")

	// The Service created: it is propagated, the endpoints reach member2,
	// and member9 is still reported.
	framework.Apply(t, fmt.Sprintf(webService, ns))
	ips := readyWebPods(t, "member1", ns, 1)
	waitDispatched(t, "member2", ns, ips, 90*time.Second)
	waitCondition(t, ns, "ServiceApplied", metav1.ConditionFalse, "Consumer cluster member9 is not found")

	// member9 dropped: all is well.
	framework.Apply(t, crossCluster(ns, []string{"member1"}, []string{"member2"}))
	waitCondition(t, ns, "ServiceApplied", metav1.ConditionTrue)
	waitCondition(t, ns, "EndpointSliceDispatched", metav1.ConditionTrue)

	// Refused, with the field named, and nothing stored.
	for _, tc := range []struct{ manifest, field string }{
		{`{types: [CrossCluster, LoadBalancer]}`, "spec.types"},
		{`{types: [CrossCluster], consumerClusters: [{name: ""}]}`, "spec.consumerClusters[0].name"},
		{`{types: [LoadBalancer]}`, "spec.types"}, // types are immutable
	} {
		f := filepath.Join(t.TempDir(), "mcs.yaml")
		m := fmt.Sprintf("apiVersion: networking.karmada.io/v1alpha1\nkind: MultiClusterService\nmetadata: {name: web, namespace: %s}\nspec: %s\n", ns, tc.manifest)
		if err := os.WriteFile(f, []byte(m), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := framework.Kubectl(t, "apply", "-f", f)
		if err == nil || !strings.Contains(out, tc.field) {
			t.Errorf("applying spec %s: %v, %s; want refused naming %s", tc.manifest, err, out, tc.field)
		}
	}
	mciRefused(t, ns)
	m, err := framework.Karmada(t).NetworkingV1alpha1().MultiClusterServices(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Spec.Types) != 1 || m.Spec.Types[0] != "CrossCluster" || len(m.Spec.ConsumerClusters) != 1 || m.Spec.ConsumerClusters[0].Name != "member2" {
		t.Errorf("refused applies changed MultiClusterService web: %+v", m.Spec)
	}
}

// TestMultiClusterServiceSample: samples/multicluster-service.yaml runs
// as its comment says: member2 gets member1's endpoints of web.
func TestMultiClusterServiceSample(t *testing.T) {
	framework.ApplySample(t, "multicluster-service.yaml")
	ips := readyWebPods(t, "member1", "default", 2)
	waitDispatched(t, "member2", "default", ips, 90*time.Second)
	waitCondition(t, "default", "ServiceApplied", metav1.ConditionTrue)
	waitCondition(t, "default", "EndpointSliceDispatched", metav1.ConditionTrue)
}
