package mcs

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// hostSlices lists the control plane's EndpointSlices of derived-<service>
// in ns as a script does (kubectl get endpointslices -l
// kubernetes.io/service-name=derived-<service>), and returns them with
// their ready endpoints as readyPodIPs does.
func hostSlices(ctx context.Context, t *testing.T, ns, service string) (list []discoveryv1.EndpointSlice, ips []string, err error) {
	out, err := framework.Kubectl(t, "-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=derived-"+service, "-o", "json")
	if err != nil {
		return nil, nil, fmt.Errorf("kubectl get endpointslices: %w: %s", err, out)
	}
	var l discoveryv1.EndpointSliceList
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		return nil, nil, err
	}
	for _, s := range l.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			pod := ""
			if ep.TargetRef != nil {
				pod = ep.TargetRef.Name
			}
			for _, a := range ep.Addresses {
				ips = append(ips, pod+"="+a)
			}
		}
	}
	sort.Strings(ips)
	return l.Items, ips, nil
}

// waitHost waits up to timeout until the control plane's slices of
// derived-nginx in ns list exactly want.
func waitHost(t *testing.T, ns string, want []string, timeout time.Duration) []discoveryv1.EndpointSlice {
	t.Helper()
	var list []discoveryv1.EndpointSlice
	framework.Eventually(t, timeout, func(ctx context.Context) string {
		l, got, err := hostSlices(ctx, t, ns, "nginx")
		if err != nil {
			return err.Error()
		}
		list = l
		if !slices.Equal(got, want) {
			return fmt.Sprintf("the control plane's EndpointSlices of derived-nginx list %v, want %v", got, want)
		}
		return ""
	})
	return list
}

// TestControlPlaneEndpointSlices: nginx runs in member1 and is exported
// from there. The control plane gets, as Karmada makes them, a copy of
// each of member1's EndpointSlices of nginx in the service's namespace,
// imported-member1-<slice>, labelled kubernetes.io/service-name=
// derived-nginx and with the member they come from. The copies are never
// propagated: not by a policy selecting every EndpointSlice, nor as the
// dependencies of a ServiceImport (its policy propagates them, as
// Karmada's defaulting has it), whose member3 gets the endpoints through
// Flotilla's own Works all the same. They follow a scale-up within
// seconds, and go with the ServiceExport.
func TestControlPlaneEndpointSlices(t *testing.T) {
	mcsCRDsInMembers(t)
	ns := framework.Namespace(t, "mcs-host-slices")
	framework.Apply(t, nginxExported(ns, 2, []string{"member1"})+fmt.Sprintf(`---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: own, namespace: %[1]s, labels: {kubernetes.io/service-name: own}}
addressType: IPv4
endpoints: [{addresses: [10.9.9.9]}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: slices, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
`, ns))

	ips := readyIn(t, ns, 2, "member1")
	list := waitHost(t, ns, ips, 90*time.Second)
	own, err := framework.MemberClient(t, "member1").DiscoveryV1().EndpointSlices(ns).List(t.Context(),
		metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=nginx"})
	if err != nil {
		t.Fatal(err)
	}
	var copies, got []string
	for _, s := range own.Items {
		copies = append(copies, "imported-member1-"+s.Name)
	}
	for _, s := range list {
		got = append(got, s.Name)
		if s.Labels[networkingv1alpha1.EndpointSliceProvisionClusterAnnotation] != "member1" ||
			s.Labels[discoveryv1.LabelManagedBy] != networkingv1alpha1.EndpointSliceDispatchControllerLabelValue ||
			s.Annotations[networkingv1alpha1.EndpointSliceProvisionClusterAnnotation] != "member1" {
			t.Errorf("the control plane's %s: labels %v annotations %v, want member1's cluster label and the dispatch's managed-by",
				s.Name, s.Labels, s.Annotations)
		}
	}
	sort.Strings(copies)
	sort.Strings(got)
	if !slices.Equal(got, copies) {
		t.Errorf("the control plane has EndpointSlices %v of derived-nginx, want %v (member1's own, imported-member1-<slice>)", got, copies)
	}
	// Selected by the member they come from.
	if out := kubectl(t, "-n", ns, "get", "endpointslices", "-l", "endpointslice.karmada.io/provision-cluster=member1", "-o", "name"); len(strings.Fields(out)) != len(copies) {
		t.Errorf("kubectl get endpointslices -l endpointslice.karmada.io/provision-cluster=member1: %q, want %d slices", out, len(copies))
	}

	// The policy selecting every EndpointSlice binds the user's own.
	rbs := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns)
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		if _, err := rbs.Get(ctx, "own-endpointslice", metav1.GetOptions{}); err != nil {
			return "the user's EndpointSlice own is not bound: " + err.Error()
		}
		return ""
	})
	// The import, once the copies exist: its binding lists them among its
	// dependencies.
	framework.Apply(t, nginxImported(ns, "member3"))
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		rb, err := rbs.Get(ctx, "nginx-serviceimport", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if deps := rb.Annotations[workv1alpha2.BindingDependenciesAnnotationKey]; !strings.Contains(deps, copies[0]) {
			return fmt.Sprintf("the ServiceImport's dependencies %q do not list %s", deps, copies[0])
		}
		return ""
	})
	waitImported(t, ns, ips, 60*time.Second)
	// Neither bound them, nor claimed them, for a few seconds.
	for range 12 {
		for _, name := range copies {
			if _, err := rbs.Get(t.Context(), name+"-endpointslice", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("the control plane's copy %s is bound (%v)", name, err)
			}
			s, err := framework.HostClient(t).DiscoveryV1().EndpointSlices(ns).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k := range s.Labels {
				if strings.Contains(k, "propagationpolicy.karmada.io") {
					t.Fatalf("the control plane's copy %s is claimed by a policy: %v", name, s.Labels)
				}
			}
		}
		time.Sleep(250 * time.Millisecond)
	}

	// A scale-up: the new pod's address follows within seconds.
	kubectl(t, "-n", ns, "scale", "deployment", "nginx", "--replicas=3")
	ips = readyIn(t, ns, 3, "member1")
	waitHost(t, ns, ips, follow)
	waitImported(t, ns, ips, follow)

	// The export deleted on the control plane: the copies go.
	kubectl(t, "-n", ns, "delete", "serviceexport", "nginx")
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		l, _, err := hostSlices(ctx, t, ns, "nginx")
		if err != nil {
			return err.Error()
		}
		if len(l) > 0 {
			return fmt.Sprintf("the control plane keeps %d EndpointSlices of derived-nginx", len(l))
		}
		return ""
	})
}
