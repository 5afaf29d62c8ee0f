package semantics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// flinkDeployments is a made-up kind shaped like Flink's FlinkDeployment:
// one job manager and some task managers, each with its replicas and
// resources.
var flinkDeployments = schema.GroupVersionResource{Group: "sem.flotilla.io", Version: "v1", Resource: "flinkdeployments"}

// componentsKind is the CRD of flinkDeployments, propagated to the
// members, and a ResourceInterpreterCustomization whose GetComponents
// reads the two components.
var componentsKind = framework.OpenCRD(flinkDeployments, "FlinkDeployment", "sem-flinkdeployments-crd", "member1", "member2") + "---\n" + `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: sem-flinkdeployment}
spec:
  target: {apiVersion: sem.flotilla.io/v1, kind: FlinkDeployment}
  customizations:
    componentResource:
      luaScript: |
        local function component(name, c)
          return {name = name, replicas = c.replicas,
                  replicaRequirements = {resourceRequest = {cpu = c.resource.cpu, memory = c.resource.memory}}}
        end
        function GetComponents(desiredObj)
          local spec = desiredObj.spec
          return {component("jobmanager", spec.jobManager), component("taskmanager", spec.taskManager)}
        end
`

// flinkDeployment is a FlinkDeployment of one job manager and two task
// managers each requesting taskManagerCPU.
func flinkDeployment(ns, name, taskManagerCPU string) string {
	return fmt.Sprintf(`apiVersion: sem.flotilla.io/v1
kind: FlinkDeployment
metadata: {name: %s, namespace: %s}
spec:
  jobManager: {replicas: 1, resource: {cpu: 500m, memory: 512Mi}}
  taskManager: {replicas: 2, resource: {cpu: %q, memory: 1Gi}}
`, name, ns, taskManagerCPU)
}

// componentsBinding describes where the binding of a FlinkDeployment is
// scheduled, as "cluster{component:replicas ...}" entries, with its
// components and Scheduled condition.
func componentsBinding(ctx context.Context, t *testing.T, ns, name string) (clusters string, b *workv1alpha2.ResourceBinding, cond *metav1.Condition, err error) {
	b, err = framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, name+"-flinkdeployment", metav1.GetOptions{})
	if err != nil {
		return "", nil, nil, err
	}
	var parts []string
	for _, tc := range b.Spec.Clusters {
		var comps []string
		for _, c := range tc.Components {
			comps = append(comps, fmt.Sprintf("%s:%d", c.Name, c.Replicas))
		}
		parts = append(parts, tc.Name+"{"+strings.Join(comps, " ")+"}")
	}
	return strings.Join(parts, ","), b, meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled), nil
}

// memberFlinkDeployments is the FlinkDeployments of ns in a member, once
// the member serves the kind.
func memberFlinkDeployments(t *testing.T, member, ns string) dynamic.ResourceInterface {
	t.Helper()
	cfg, err := framework.Member(t, member).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	c := dynamic.NewForConfigOrDie(cfg).Resource(flinkDeployments).Namespace(ns)
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		if _, err := c.List(ctx, metav1.ListOptions{}); err != nil {
			return fmt.Sprintf("%s does not serve flinkdeployments yet: %v", member, err)
		}
		return ""
	})
	return c
}

// TestComponents: a workload of several pod templates
// (GetComponents of a ResourceInterpreterCustomization) is scheduled as a
// whole, like Karmada's MultiplePodTemplatesScheduling: the binding holds
// its components (GetComponentsSucceed on the template), a member that
// cannot host the whole set (member1, whose quota of 1 pod runs no pair of
// task managers) is no candidate, the member that can gets the whole set,
// and a workload no member can host is Unschedulable. A template
// GetComponents fails on gets GetComponentsFailed.
func TestComponents(t *testing.T) {
	framework.Apply(t, componentsKind)
	kubectl(t, "wait", "--for=condition=Established", "crd/flinkdeployments.sem.flotilla.io", "--timeout=30s")
	ns := framework.Namespace(t, "sem-components")
	// Before the namespace goes (cleanups run last first): the templates
	// first, so none is read again without its customization.
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "flinkdeployments", "-n", ns, "--all", "--wait=true")
		_, _ = framework.Kubectl(t, "delete", "resourceinterpretercustomization", "sem-flinkdeployment", "--ignore-not-found")
		_, _ = framework.Kubectl(t, "delete", "clusterpropagationpolicy", "sem-flinkdeployments-crd", "--ignore-not-found")
	})
	members := map[string]dynamic.ResourceInterface{
		"member1": memberFlinkDeployments(t, "member1", ns),
		"member2": memberFlinkDeployments(t, "member2", ns),
	}
	memberQuota(t, "member1", ns, "1")
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: flink, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: sem.flotilla.io/v1, kind: FlinkDeployment}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
`, ns))

	framework.Apply(t, flinkDeployment(ns, "wordcount", "1"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		got, b, cond, err := componentsBinding(ctx, t, ns, "wordcount")
		if err != nil {
			return err.Error()
		}
		if want := "member2{jobmanager:1 taskmanager:2}"; got != want || cond == nil || cond.Status != metav1.ConditionTrue {
			return fmt.Sprintf("scheduled to %q (%v), want %q; components %+v", got, cond, want, b.Spec.Components)
		}
		return ""
	})
	_, b, _, err := componentsBinding(t.Context(), t, ns, "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Spec.Components) != 2 || b.Spec.Components[1].Name != "taskmanager" || b.Spec.Components[1].Replicas != 2 ||
		b.Spec.Components[1].ReplicaRequirements == nil || b.Spec.Components[1].ReplicaRequirements.ResourceRequest.Cpu().MilliValue() != 1000 {
		t.Errorf("binding components %+v, want a job manager and 2 task managers of 1 CPU", b.Spec.Components)
	}
	if b.Spec.Replicas != 0 || b.Spec.ReplicaRequirements != nil {
		t.Errorf("binding replicas %d, requirements %+v: want the components alone", b.Spec.Replicas, b.Spec.ReplicaRequirements)
	}
	waitEvent(t, ns, "FlinkDeployment", "wordcount", "GetComponentsSucceed", "Get components of resource template successfully.")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		o, err := members["member2"].Get(ctx, "wordcount", metav1.GetOptions{})
		if err != nil {
			return "member2: " + err.Error()
		}
		// The whole workload, not revised to a share of it.
		if tm, _, _ := unstructured.NestedInt64(o.Object, "spec", "taskManager", "replicas"); tm != 2 {
			return fmt.Sprintf("member2 runs %d task managers, want 2", tm)
		}
		return ""
	})
	if _, err := members["member1"].Get(t.Context(), "wordcount", metav1.GetOptions{}); err == nil {
		t.Error("member1, which cannot host the whole set, got the FlinkDeployment")
	}

	// No member has 100k CPUs for a pair of task managers.
	framework.Apply(t, flinkDeployment(ns, "huge", "100k"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		got, _, cond, err := componentsBinding(ctx, t, ns, "huge")
		if err != nil {
			return err.Error()
		}
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha2.BindingReasonUnschedulable ||
			!strings.Contains(cond.Message, "cannot host a whole set of the components") || got != "" {
			return fmt.Sprintf("huge: scheduled to %q, condition %+v; want Unschedulable, no cluster", got, cond)
		}
		return ""
	})

	// GetComponents fails on a template without task managers.
	framework.Apply(t, fmt.Sprintf(`apiVersion: sem.flotilla.io/v1
kind: FlinkDeployment
metadata: {name: broken, namespace: %s}
spec:
  jobManager: {replicas: 1, resource: {cpu: 500m, memory: 512Mi}}
`, ns))
	waitEvent(t, ns, "FlinkDeployment", "broken", "GetComponentsFailed", "Get components of resource template failed")
}
