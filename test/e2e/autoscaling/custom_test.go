package autoscaling

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// rpsMetric is the custom metric the members' custom-metrics-emulator
// reports for each pod from its annotation custom-metrics.flotilla.io/<metric>.
const rpsMetric = "requests_per_second"

// nginxRPS is nginx whose pods report rps for requests_per_second.
func nginxRPS(ns string, replicas int, rps string) string {
	return nginxAnnotated(ns, replicas, env.CustomMetricsAnnotationPrefix+rpsMetric, rps)
}

// customMetricsRaw reads a custom.metrics.k8s.io/v1beta2 path of the
// control plane with `kubectl get --raw`.
func customMetricsRaw(t *testing.T, path string) (*custommetricsv1beta2.MetricValueList, error) {
	out, err := framework.Kubectl(t, "get", "--raw", "/apis/custom.metrics.k8s.io/v1beta2/"+path)
	if err != nil {
		return nil, fmt.Errorf("kubectl get --raw %s: %v: %s", path, err, out)
	}
	list := &custommetricsv1beta2.MetricValueList{}
	if err := json.Unmarshal([]byte(out), list); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", path, err, out)
	}
	return list, nil
}

// waitRunning waits for want Running pods of app=nginx in each member.
func waitRunning(t *testing.T, ns string, want int) map[string][]string {
	t.Helper()
	var pods map[string][]string
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		var err error
		if pods, err = runningPods(ctx, t, ns); err != nil {
			return err.Error()
		}
		if len(pods["member1"]) != want || len(pods["member2"]) != want {
			return fmt.Sprintf("running pods %v, want %d in each member", pods, want)
		}
		return ""
	})
	return pods
}

// TestCustomMetricsSummed: custom.metrics.k8s.io on the control plane asks
// every member's custom metrics API (each member's custom-metrics-emulator):
// it lists the pods of both members, by selector and by name, and sums the
// values of a pod that has the same name in both.
func TestCustomMetricsSummed(t *testing.T) {
	ns := framework.Namespace(t, "s8-custom")
	framework.Apply(t, nginxRPS(ns, 2, "10"))
	pods := waitRunning(t, ns, 1)
	var all []string
	for _, m := range members {
		all = append(all, pods[m]...)
	}
	slices.Sort(all)

	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		list, err := customMetricsRaw(t, "namespaces/"+ns+"/pods/*/"+rpsMetric+"?labelSelector=app%3Dnginx")
		if err != nil {
			return err.Error()
		}
		var got []string
		for _, v := range list.Items {
			got = append(got, v.DescribedObject.Name)
			if v.DescribedObject.Kind != "Pod" || v.DescribedObject.Namespace != ns || v.Metric.Name != rpsMetric || v.Value.String() != "10" {
				return fmt.Sprintf("value %+v, want Pod %s/%s %s = 10", v, ns, v.DescribedObject.Name, rpsMetric)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, all) {
			return fmt.Sprintf("pods %v, want those of both members %v", got, all)
		}
		t.Logf("control plane: %s of %v = 10", rpsMetric, got)
		return ""
	})

	// By name: the one member that has the pod answers.
	name := pods["member2"][0]
	list, err := customMetricsRaw(t, "namespaces/"+ns+"/pods/"+name+"/"+rpsMetric)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].DescribedObject.Name != name || list.Items[0].Value.String() != "10" {
		t.Errorf("%s by name: %+v, want one value 10", name, list.Items)
	}
	// A pod of the same name in both members is one object to the control
	// plane: its values are summed.
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: twin
  namespace: %[1]s
  labels: {app: twin}
  annotations: {%[2]s: "10"}
spec: {containers: [{name: nginx, image: nginx:1.7.9}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: twin, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Pod, name: twin}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`, ns, env.CustomMetricsAnnotationPrefix+rpsMetric))
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		list, err := customMetricsRaw(t, "namespaces/"+ns+"/pods/twin/"+rpsMetric)
		if err != nil {
			return err.Error()
		}
		if len(list.Items) != 1 || list.Items[0].Value.String() != "20" {
			return fmt.Sprintf("twin: %+v, want one value 20 (10 from each member)", list.Items)
		}
		return ""
	})
	list, err = customMetricsRaw(t, "namespaces/"+ns+"/pods/*/"+rpsMetric+"?labelSelector=app%3Dtwin")
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].DescribedObject.Name != "twin" || list.Items[0].Value.String() != "20" {
		t.Errorf("app=twin: %+v, want twin = 20", list.Items)
	}

	// A metric no pod has is NotFound.
	if out, err := framework.Kubectl(t, "get", "--raw", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/"+ns+"/pods/"+name+"/no_such_metric"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("a metric no pod has: err %v, output %s; want NotFound", err, out)
	}
}

// fhpaPods is a FederatedHPA on the Pods metric requests_per_second at an
// average of 5 per pod. maxReplicas is the first step up (2 pods at 10 → 4),
// so that the scale holds there: the new pods report 10 too.
const fhpaPods = `apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: nginx, namespace: %s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  minReplicas: 1
  maxReplicas: 4
  metrics:
    - type: Pods
      pods:
        metric: {name: requests_per_second}
        target: {type: AverageValue, averageValue: "5"}
`

// TestFederatedHPAPodsMetric: a FederatedHPA on a Pods metric reads it
// through the control plane's custom metrics API from both members: two
// pods at 10 against a target average of 5 want 4 replicas.
func TestFederatedHPAPodsMetric(t *testing.T) {
	ns := framework.Namespace(t, "s8-fhpa-pods")
	framework.Apply(t, nginxRPS(ns, 2, "10"))
	waitRunning(t, ns, 1)
	framework.Apply(t, fmt.Sprintf(fhpaPods, ns))
	kc := karmada(t)

	framework.Eventually(t, 3*time.Minute, func(ctx context.Context) string {
		d, err := host(t).AppsV1().Deployments(ns).Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		f, err := kc.AutoscalingV1alpha1().FederatedHPAs(ns).Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if *d.Spec.Replicas != 4 || f.Status.DesiredReplicas != 4 {
			return fmt.Sprintf("template replicas %d, desired %d; conditions %s; events %v", *d.Spec.Replicas, f.Status.DesiredReplicas,
				conditions(f.Status.Conditions), eventMessages(ctx, t, ns, "FederatedHPA", "nginx"))
		}
		return ""
	})
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		msgs := eventMessages(ctx, t, ns, "FederatedHPA", "nginx")
		if !containsLine(msgs, "SuccessfulRescale", "New size: 4", "pods metric "+rpsMetric+" above target") {
			return fmt.Sprintf("events %v, want a SuccessfulRescale to 4, pods metric %s above target", msgs, rpsMetric)
		}
		t.Logf("events %v", msgs)
		return ""
	})
	f, err := kc.AutoscalingV1alpha1().FederatedHPAs(ns).Get(t.Context(), "nginx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(f.Status.CurrentMetrics, func(m autoscalingv2.MetricStatus) bool {
		return m.Type == autoscalingv2.PodsMetricSourceType && m.Pods != nil && m.Pods.Metric.Name == rpsMetric &&
			m.Pods.Current.AverageValue != nil && m.Pods.Current.AverageValue.MilliValue() == 10000
	}) {
		t.Errorf("current metrics %+v, want pods %s at an average of 10", f.Status.CurrentMetrics, rpsMetric)
	}
}
