package mcs

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

var members = []string{"member1", "member2", "member3"}

// crdsMu guards crdsPropagated: the MCS CRDs are taken to every member
// once, by the first test that needs them, and stay (they are the
// members' API, like the members themselves: deleting them would delete
// every test's ServiceExports and ServiceImports).
var (
	crdsMu         sync.Mutex
	crdsPropagated bool
)

// mcsCRDsInMembers propagates the CRDs flotilla-apiserver installed on the
// host to every member with a ClusterPropagationPolicy, as the seed does,
// and waits until every Cluster lists both kinds among its APIs.
func mcsCRDsInMembers(t *testing.T) {
	t.Helper()
	crdsMu.Lock()
	defer crdsMu.Unlock()
	if crdsPropagated {
		return
	}
	framework.Apply(t, `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: mcs-crds}
spec:
  resourceSelectors:
  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: serviceexports.multicluster.x-k8s.io}
  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: serviceimports.multicluster.x-k8s.io}
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
`)
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		for _, m := range members {
			c, err := framework.Karmada(t).ClusterV1alpha1().Clusters().Get(ctx, m, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			if !serves(c, "serviceexports") || !serves(c, "serviceimports") {
				return m + " does not list serviceexports and serviceimports among its APIs yet"
			}
		}
		return ""
	})
	crdsPropagated = true
}

func serves(c *clusterv1alpha1.Cluster, resource string) bool {
	for _, e := range c.Status.APIEnablements {
		if e.GroupVersion == "multicluster.x-k8s.io/v1alpha1" && slices.ContainsFunc(e.Resources, func(r clusterv1alpha1.APIResource) bool { return r.Name == resource }) {
			return true
		}
	}
	return false
}

// nginx is the seed's flow in ns: a Deployment nginx of replicas divided
// over member1 and member2 with its Service, a ServiceExport of it
// propagated to both, and a ServiceImport propagated to member3.
func nginx(ns string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx, namespace: %[1]s, labels: {app: nginx}}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - {name: nginx, image: nginx:1.27, ports: [{containerPort: 80}], resources: {requests: {cpu: 10m, memory: 16Mi}}}
---
apiVersion: v1
kind: Service
metadata: {name: nginx, namespace: %[1]s}
spec:
  selector: {app: nginx}
  ports: [{name: http, port: 80, targetPort: 80}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  - {apiVersion: v1, kind: Service, name: nginx}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member1]}, weight: 1}
        - {targetCluster: {clusterNames: [member2]}, weight: 1}
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: nginx, namespace: %[1]s}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-export, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceExport, name: nginx}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: nginx, namespace: %[1]s}
spec:
  type: ClusterSetIP
  ports: [{name: http, port: 80, protocol: TCP}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-import, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceImport, name: nginx}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`, ns, replicas)
}

// readyPodIPs returns member's Ready pods of app=nginx in ns, as
// "<pod>=<IP>": kwok hands the same addresses out in every member, and
// again to a pod's replacement, so the pod tells endpoints apart.
func readyPodIPs(ctx context.Context, t *testing.T, member, ns string) ([]string, error) {
	pods, err := framework.MemberClient(t, member).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.PodIP == "" {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				out = append(out, p.Name+"="+p.Status.PodIP)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// providerIPs waits until member1 and member2 have want Ready pods of
// nginx between them, and returns them as readyPodIPs does.
func providerIPs(t *testing.T, ns string, want int) []string {
	t.Helper()
	var ips []string
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		ips = nil
		for _, m := range []string{"member1", "member2"} {
			got, err := readyPodIPs(ctx, t, m, ns)
			if err != nil {
				return err.Error()
			}
			if len(got) == 0 {
				return m + " runs no Ready nginx pod"
			}
			ips = append(ips, got...)
		}
		if len(ips) != want {
			return fmt.Sprintf("%d Ready nginx pods in member1 and member2, want %d", len(ips), want)
		}
		return ""
	})
	sort.Strings(ips)
	return ips
}

// importedIPs returns the ready endpoints of member3's EndpointSlices of
// derived-<service> in ns, as "<pod>=<address>" (the pod their targetRef
// names), and the slices' names.
func importedIPs(ctx context.Context, t *testing.T, ns, service string) (ips, slices []string, err error) {
	list, err := framework.MemberClient(t, "member3").DiscoveryV1().EndpointSlices(ns).List(ctx,
		metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=derived-" + service})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range list.Items {
		slices = append(slices, s.Name)
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
	sort.Strings(slices)
	return ips, slices, nil
}

// waitImported waits up to timeout until member3's derived-nginx
// EndpointSlices list exactly want.
func waitImported(t *testing.T, ns string, want []string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, func(ctx context.Context) string {
		got, names, err := importedIPs(ctx, t, ns, "nginx")
		if err != nil {
			return err.Error()
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("member3's derived-nginx EndpointSlices %v list %v, want %v", names, got, want)
		}
		return ""
	})
}

// works lists the Works of namespace ns labelled for service ns/name and
// kept by manager, as "<execution namespace>/<name>".
func works(ctx context.Context, t *testing.T, ns, name, manager string) ([]string, error) {
	list, err := framework.Karmada(t).WorkV1alpha1().Works("").List(ctx, metav1.ListOptions{LabelSelector: fmt.Sprintf(
		"endpointslice.karmada.io/namespace=%s,endpointslice.karmada.io/name=%s", ns, name)})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, w := range list.Items {
		if slices.Contains(strings.Split(w.Labels["endpointslice.karmada.io/managed-by"], "."), manager) {
			out = append(out, w.Namespace+"/"+w.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// serviceGone waits until member3 has no Service ns/name.
func serviceGone(t *testing.T, ns, name string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, func(ctx context.Context) string {
		_, err := framework.MemberClient(t, "member3").CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return ""
		case err != nil:
			return err.Error()
		}
		return "member3 still has Service " + name
	})
}

// kubectl runs kubectl on the control plane and fails the test on error.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := framework.Kubectl(t, args...)
	if err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
	return out
}
