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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
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

// mcsCRDsInMembers registers member3 in Pull mode (pullMember3), then
// propagates the CRDs flotilla-apiserver installed on the host to every
// member with a ClusterPropagationPolicy, as the seed does, and waits until
// every Cluster lists both kinds among its APIs.
func mcsCRDsInMembers(t *testing.T) {
	t.Helper()
	pullMember3(t)
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

// agentMu guards agent: member3's registration in Pull mode and its
// flotilla-agent, made once by the first test that needs the members (the
// environment stops the agent with member3).
var (
	agentMu sync.Mutex
	agent   *env.Process
)

// pullMember3 registers member3 in Pull mode as a user does (bootstrap
// token, flotillactl register) and starts its agent, unless that is done
// (an agent that exited is started again), and waits until member3 is a
// Ready Pull cluster: the control plane reaches it only through the
// agent's tunnel.
func pullMember3(t *testing.T) {
	t.Helper()
	agentMu.Lock()
	defer agentMu.Unlock()
	if agent == nil {
		kubeconfig, err := framework.Env.Register(t.Context(), "member3")
		if err != nil {
			t.Fatal(err)
		}
		p, err := framework.Env.StartAgent(t.Context(), "member3", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		agent = p
	} else if exited, _ := agent.Exited(); exited {
		if err := agent.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		c, err := framework.Karmada(t).ClusterV1alpha1().Clusters().Get(ctx, "member3", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if c.Spec.SyncMode != clusterv1alpha1.Pull {
			return fmt.Sprintf("member3 syncMode %q, want Pull", c.Spec.SyncMode)
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return fmt.Sprintf("member3 is not Ready: %v", c.Status.Conditions)
		}
		return ""
	})
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
	return nginxAcross(ns, replicas, []string{"member1", "member2"}, "member3")
}

// nginxAcross is nginx with other members: the Deployment divided evenly
// over providers, which export it, and the import propagated to importer.
func nginxAcross(ns string, replicas int, providers []string, importer string) string {
	return nginxExported(ns, replicas, providers) + "---\n" + nginxImported(ns, importer)
}

// nginxExported is nginxAcross without the import.
func nginxExported(ns string, replicas int, providers []string) string {
	var weights strings.Builder
	for _, p := range providers {
		fmt.Fprintf(&weights, "        - {targetCluster: {clusterNames: [%s]}, weight: 1}\n", p)
	}
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
    clusterAffinity: {clusterNames: [%[3]s]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
%[4]s---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: nginx, namespace: %[1]s}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-export, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceExport, name: nginx}]
  placement: {clusterAffinity: {clusterNames: [%[3]s]}}
`, ns, replicas, strings.Join(providers, ", "), weights.String())
}

// nginxImported is the import of nginxAcross, propagated to importer.
func nginxImported(ns, importer string) string {
	return fmt.Sprintf(`apiVersion: multicluster.x-k8s.io/v1alpha1
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
  placement: {clusterAffinity: {clusterNames: [%[2]s]}}
`, ns, importer)
}

// readyPodIPs returns member's Ready pods of app=nginx in ns, as
// "<pod>=<IP>": kwok hands the same addresses out in every member, and
// again to a pod's replacement, so the pod tells endpoints apart.
func readyPodIPs(ctx context.Context, t *testing.T, member, ns string) ([]string, error) {
	return readyPodsOf(ctx, t, member, ns, "nginx")
}

// readyPodsOf returns member's Ready pods of app in ns as readyPodIPs does.
func readyPodsOf(ctx context.Context, t *testing.T, member, ns, app string) ([]string, error) {
	pods, err := framework.MemberClient(t, member).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
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
	return readyIn(t, ns, want, "member1", "member2")
}

// readyIn waits until providers, each running at least one, have want
// Ready pods of nginx between them, and returns them as readyPodIPs does.
func readyIn(t *testing.T, ns string, want int, providers ...string) []string {
	t.Helper()
	var ips []string
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		ips = nil
		for _, m := range providers {
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
			return fmt.Sprintf("%d Ready nginx pods in %v, want %d", len(ips), providers, want)
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
	return importedFrom(ctx, t, "member3", "", ns, service)
}

// importedFrom is importedIPs in importer, of the slices provider exports
// (those its provision-cluster annotation names), or of all when provider
// is "".
func importedFrom(ctx context.Context, t *testing.T, importer, provider, ns, service string) (ips, slices []string, err error) {
	list, err := framework.MemberClient(t, importer).DiscoveryV1().EndpointSlices(ns).List(ctx,
		metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=derived-" + service})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range list.Items {
		if provider != "" && s.Annotations[networkingv1alpha1.EndpointSliceProvisionClusterAnnotation] != provider {
			continue
		}
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
	waitImportedFrom(t, "member3", "", ns, want, timeout)
}

// waitImportedFrom waits up to timeout until importer's derived-nginx
// EndpointSlices from provider (all, when "") list exactly want.
func waitImportedFrom(t *testing.T, importer, provider, ns string, want []string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, func(ctx context.Context) string {
		got, names, err := importedFrom(ctx, t, importer, provider, ns, "nginx")
		if err != nil {
			return err.Error()
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("%s's derived-nginx EndpointSlices %v (from %q) list %v, want %v", importer, names, provider, got, want)
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

// memberDynamic is a dynamic client of member.
func memberDynamic(t *testing.T, member string) dynamic.Interface {
	t.Helper()
	cfg, err := framework.Member(t, member).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return dynamic.NewForConfigOrDie(cfg)
}

// exportGone waits until member has no ServiceExport ns/name.
func exportGone(t *testing.T, member, ns, name string) {
	t.Helper()
	dyn := memberDynamic(t, member)
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		_, err := dyn.Resource(multiclusterv1alpha1.ServiceExports).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return ""
		case err != nil:
			return err.Error()
		}
		return member + " still has ServiceExport " + name
	})
}
