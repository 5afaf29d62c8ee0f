package semantics

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// FlinkDeployment and Volcano Job are interpreted out of
// the box, without a ResourceInterpreterCustomization: their bindings hold
// the components the shipped customizations read, and the status the
// members report comes back to the template.

var (
	apacheFlinkDeployments = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkdeployments"}
	volcanoJobs            = schema.GroupVersionResource{Group: "batch.volcano.sh", Version: "v1alpha1", Resource: "jobs"}
)

// thirdPartyCRD is a minimal CRD of a real third-party kind (the schema
// keeps any spec and status), propagated to both members.
func thirdPartyCRD(gvr schema.GroupVersionResource, kind string) string {
	return framework.OpenCRD(gvr, kind, "sem-thirdparty-"+gvr.Resource+"-"+gvr.Group, "member1", "member2")
}

// installThirdPartyKind installs the CRD on the control plane and waits
// until both members serve the kind; it returns the member clients of ns.
func installThirdPartyKind(t *testing.T, gvr schema.GroupVersionResource, kind, ns string) map[string]dynamic.ResourceInterface {
	t.Helper()
	framework.Apply(t, thirdPartyCRD(gvr, kind))
	kubectl(t, "wait", "--for=condition=Established", "crd/"+gvr.Resource+"."+gvr.Group, "--timeout=30s")
	out := map[string]dynamic.ResourceInterface{}
	for _, m := range []string{"member1", "member2"} {
		cfg, err := framework.Member(t, m).RESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		c := dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace(ns)
		framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
			if _, err := c.List(ctx, metav1.ListOptions{}); err != nil {
				return fmt.Sprintf("%s does not serve %s yet: %v", m, gvr.GroupResource(), err)
			}
			return ""
		})
		out[m] = c
	}
	return out
}

// componentsOf is the binding's components as "name:replicas:cpu" entries.
func componentsOf(b *workv1alpha2.ResourceBinding) string {
	var parts []string
	for _, c := range b.Spec.Components {
		cpu := ""
		if c.ReplicaRequirements != nil {
			cpu = c.ReplicaRequirements.ResourceRequest.Cpu().String()
		}
		parts = append(parts, fmt.Sprintf("%s:%d:%s", c.Name, c.Replicas, cpu))
	}
	return strings.Join(parts, " ")
}

// clustersOf is the binding's clusters as "cluster{component:replicas ...}".
func clustersOf(b *workv1alpha2.ResourceBinding) string {
	var parts []string
	for _, tc := range b.Spec.Clusters {
		var comps []string
		for _, c := range tc.Components {
			comps = append(comps, fmt.Sprintf("%s:%d", c.Name, c.Replicas))
		}
		parts = append(parts, tc.Name+"{"+strings.Join(comps, " ")+"}")
	}
	return strings.Join(parts, ",")
}

// waitComponents waits until the binding holds want components and is
// scheduled to wantClusters, and returns it.
func waitComponents(t *testing.T, ns, binding, want, wantClusters string) *workv1alpha2.ResourceBinding {
	t.Helper()
	var b *workv1alpha2.ResourceBinding
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		var err error
		b, err = framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, binding, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if got := componentsOf(b); got != want {
			return fmt.Sprintf("binding components %q, want %q", got, want)
		}
		if got := clustersOf(b); got != wantClusters {
			return fmt.Sprintf("binding scheduled to %q, want %q", got, wantClusters)
		}
		return ""
	})
	return b
}

// setMemberStatus writes the status of the member's object, as the kind's
// operator would.
func setMemberStatus(t *testing.T, c dynamic.ResourceInterface, name string, status map[string]any) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		o, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		o.Object["status"] = status
		if _, err := c.UpdateStatus(ctx, o, metav1.UpdateOptions{}); err != nil {
			return err.Error()
		}
		return ""
	})
}

// waitReported waits until the binding's aggregated status of cluster
// holds the reflected status with field = want and is Healthy.
func waitReported(t *testing.T, ns, binding, cluster string, want string, field ...string) {
	t.Helper()
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, binding, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		for _, it := range b.Status.AggregatedStatus {
			if it.ClusterName != cluster {
				continue
			}
			var st map[string]any
			if it.Status != nil {
				_ = json.Unmarshal(it.Status.Raw, &st)
			}
			if got, _, _ := unstructured.NestedFieldNoCopy(st, field...); fmt.Sprint(got) != want || it.Health != workv1alpha2.ResourceHealthy {
				return fmt.Sprintf("%s reported status %v (health %s), want %s = %s and Healthy", cluster, st, it.Health, strings.Join(field, "."), want)
			}
			return ""
		}
		return fmt.Sprintf("no aggregated status of %s yet: %+v", cluster, b.Status.AggregatedStatus)
	})
}

// waitTemplateStatus waits until the template's status has field = want.
func waitTemplateStatus(t *testing.T, gvr schema.GroupVersionResource, ns, name, want string, field ...string) {
	t.Helper()
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	c := dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace(ns)
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		o, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		path := append([]string{"status"}, field...)
		if got, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...); fmt.Sprint(got) != want {
			return fmt.Sprintf("template status %v, want %s = %s", o.Object["status"], strings.Join(path, "."), want)
		}
		return ""
	})
}

// TestThirdPartyFlinkDeployment: a FlinkDeployment duplicated to both
// members is interpreted by the shipped customization: a job manager and
// parallelism / task slots task managers, each with its requests; the
// members' status is reflected (Healthy once the job runs) and aggregated
// into the template.
func TestThirdPartyFlinkDeployment(t *testing.T) {
	ns := framework.Namespace(t, "sem-tp-flink")
	members := installThirdPartyKind(t, apacheFlinkDeployments, "FlinkDeployment", ns)
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "flinkdeployments.flink.apache.org", "-n", ns, "--all", "--wait=true")
	})
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: flink, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: basic-example, namespace: %[1]s}
spec:
  flinkConfiguration: {taskmanager.numberOfTaskSlots: "2"}
  flinkVersion: v1_17
  image: flink:1.17
  job: {jarURI: "local:///opt/flink/examples/streaming/StateMachineExample.jar", parallelism: 4, upgradeMode: stateless}
  jobManager: {replicas: 1, resource: {cpu: 0.5, memory: 1024m}}
  serviceAccount: flink
  taskManager: {resource: {cpu: 0.25, memory: 1024m}}
`, ns))

	b := waitComponents(t, ns, "basic-example-flinkdeployment", "jobmanager:1:500m taskmanager:2:250m",
		"member1{jobmanager:1 taskmanager:2},member2{jobmanager:1 taskmanager:2}")
	if r := b.Spec.Components[1].ReplicaRequirements; r == nil || r.ResourceRequest.Memory().String() != "1024m" {
		t.Errorf("task manager requirements %+v, want the memory of spec.taskManager.resource", r)
	}
	for m, c := range members {
		framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
			if _, err := c.Get(ctx, "basic-example", metav1.GetOptions{}); err != nil {
				return m + ": " + err.Error()
			}
			return ""
		})
	}

	setMemberStatus(t, members["member1"], "basic-example", map[string]any{
		"jobManagerDeploymentStatus": "READY", "lifecycleState": "STABLE", "observedGeneration": int64(1),
		"jobStatus":   map[string]any{"jobName": "State machine job", "state": "RUNNING"},
		"taskManager": map[string]any{"labelSelector": "component=taskmanager,app=basic-example", "replicas": int64(2)},
	})
	waitReported(t, ns, "basic-example-flinkdeployment", "member1", "RUNNING", "jobStatus", "state")
	waitTemplateStatus(t, apacheFlinkDeployments, ns, "basic-example", "RUNNING", "jobStatus", "state")
	waitTemplateStatus(t, apacheFlinkDeployments, ns, "basic-example", "STABLE", "lifecycleState")
}

// TestThirdPartyVolcanoJob: a Volcano Job divided onto one member (cluster
// spread of one group) is interpreted by the shipped customization: one
// component per task, minAvailable replicas, the task's pod requests; the
// whole gang lands on one member, and its status (task counts, phase)
// comes back to the template.
func TestThirdPartyVolcanoJob(t *testing.T) {
	ns := framework.Namespace(t, "sem-tp-volcano")
	members := installThirdPartyKind(t, volcanoJobs, "Job", ns)
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "jobs.batch.volcano.sh", "-n", ns, "--all", "--wait=true")
	})
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: volcano, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    spreadConstraints: [{spreadByField: cluster, minGroups: 1, maxGroups: 1}]
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: dk-job, namespace: %[1]s}
spec:
  minAvailable: 3
  queue: default
  schedulerName: volcano
  tasks:
  - minAvailable: 1
    name: job-nginx1
    replicas: 1
    template:
      spec:
        containers: [{name: nginx, image: "nginx:latest", resources: {requests: {cpu: 100m}}}]
        restartPolicy: OnFailure
  - minAvailable: 2
    name: job-nginx2
    replicas: 3
    template:
      spec:
        containers: [{name: nginx, image: "nginx:latest", resources: {requests: {cpu: 200m, memory: 64Mi}}}]
        restartPolicy: OnFailure
`, ns))

	var b *workv1alpha2.ResourceBinding
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		var err error
		b, err = framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "dk-job-job", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if got, want := componentsOf(b), "job-nginx1:1:100m job-nginx2:2:200m"; got != want {
			return fmt.Sprintf("binding components %q, want %q", got, want)
		}
		if len(b.Spec.Clusters) != 1 || clustersOf(b) != b.Spec.Clusters[0].Name+"{job-nginx1:1 job-nginx2:2}" {
			return fmt.Sprintf("binding scheduled to %q, want the whole gang on one member", clustersOf(b))
		}
		return ""
	})
	if b.Spec.Replicas != 0 || b.Spec.ReplicaRequirements != nil {
		t.Errorf("binding replicas %d, requirements %+v: want the components alone", b.Spec.Replicas, b.Spec.ReplicaRequirements)
	}
	if r := b.Spec.Components[1].ReplicaRequirements; r == nil || r.ResourceRequest.Memory().String() != "64Mi" {
		t.Errorf("job-nginx2 requirements %+v, want its pod's requests", r)
	}
	cluster := b.Spec.Clusters[0].Name
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if _, err := members[cluster].Get(ctx, "dk-job", metav1.GetOptions{}); err != nil {
			return cluster + ": " + err.Error()
		}
		return ""
	})

	setMemberStatus(t, members[cluster], "dk-job", map[string]any{
		"minAvailable": int64(3), "running": int64(4), "version": int64(1),
		"state":           map[string]any{"phase": "Running"},
		"taskStatusCount": map[string]any{"job-nginx1": map[string]any{"phase": map[string]any{"Running": int64(1)}}, "job-nginx2": map[string]any{"phase": map[string]any{"Running": int64(3)}}},
	})
	waitReported(t, ns, "dk-job-job", cluster, "Running", "state", "phase")
	waitTemplateStatus(t, volcanoJobs, ns, "dk-job", "Running", "state", "phase")
	waitTemplateStatus(t, volcanoJobs, ns, "dk-job", "4", "running")
	waitTemplateStatus(t, volcanoJobs, ns, "dk-job", "3", "taskStatusCount", "job-nginx2", "phase", "Running")
}

// widgets is a made-up kind whose ResourceInterpreterCustomization
// returns its replica requirements with an empty nodeClaim, the shape of
// Karmada's FlinkDeployment GetReplicas when no pod template is set.
var widgets = schema.GroupVersionResource{Group: "sem21.flotilla.io", Version: "v1", Resource: "widgets"}

const widgetCustomization = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: sem21-widget}
spec:
  target: {apiVersion: sem21.flotilla.io/v1, kind: Widget}
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj)
          local requirement = {resourceRequest = {cpu = obj.spec.cpu}, nodeClaim = {}}
          if obj.spec.zone ~= nil then
            requirement.nodeClaim.nodeSelector = {zone = obj.spec.zone}
          end
          return obj.spec.size, requirement
        end
`

// TestLuaEmptyNodeClaim: a GetReplicas script returning
// requirement.nodeClaim = {} gives a binding with the replicas and
// requests and no nodeClaim (not GetReplicasFailed); a filled nodeClaim
// still comes through.
func TestLuaEmptyNodeClaim(t *testing.T) {
	ns := framework.Namespace(t, "sem-lua-empty")
	installThirdPartyKind(t, widgets, "Widget", ns)
	framework.Apply(t, widgetCustomization)
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "widgets.sem21.flotilla.io", "-n", ns, "--all", "--wait=true")
		_, _ = framework.Kubectl(t, "delete", "resourceinterpretercustomization", "sem21-widget", "--ignore-not-found")
	})
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: widgets, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: sem21.flotilla.io/v1, kind: Widget}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
---
apiVersion: sem21.flotilla.io/v1
kind: Widget
metadata: {name: plain, namespace: %[1]s}
spec: {size: 4, cpu: 100m}
---
apiVersion: sem21.flotilla.io/v1
kind: Widget
metadata: {name: zoned, namespace: %[1]s}
spec: {size: 2, cpu: 100m, zone: a}
`, ns))
	for _, tc := range []struct {
		name     string
		replicas int32
		claim    string
	}{{"plain", 4, "<nil>"}, {"zoned", 2, "map[zone:a]"}} {
		framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
			b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, tc.name+"-widget", metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			req := b.Spec.ReplicaRequirements
			if b.Spec.Replicas != tc.replicas || req == nil || req.ResourceRequest.Cpu().String() != "100m" {
				return fmt.Sprintf("%s: binding replicas %d, requirements %+v; want %d replicas of 100m", tc.name, b.Spec.Replicas, req, tc.replicas)
			}
			claim := "<nil>"
			if req.NodeClaim != nil {
				claim = fmt.Sprint(req.NodeClaim.NodeSelector)
			}
			if claim != tc.claim {
				return fmt.Sprintf("%s: node claim %+v, want node selector %s", tc.name, req.NodeClaim, tc.claim)
			}
			if len(b.Spec.Clusters) == 0 {
				return tc.name + ": not scheduled yet"
			}
			return ""
		})
	}
	if msgs := eventsOf(t, ns, "Widget", "plain", "GetReplicasFailed"); len(msgs) > 0 {
		t.Errorf("GetReplicasFailed on the template: %q", msgs)
	}
}
