package validation

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/internal/validationtest"
)

// s8FederatedHPA is the FederatedHPA of samples/autoscaling.yaml, verbatim.
const s8FederatedHPA = `
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: nginx}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  minReplicas: 1
  maxReplicas: 10
  behavior:
    scaleDown: {stabilizationWindowSeconds: 10}
    scaleUp: {stabilizationWindowSeconds: 10}
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 10}}
`

// s8CronFederatedHPA scales the sample's nginx Deployment to 5 every minute.
const s8CronFederatedHPA = `
apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: nginx-cron}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  rules:
    - {name: scale-up, schedule: "*/1 * * * *", targetReplicas: 5}
`

// s8CronFederatedHPAOnFHPA sets the bounds of s8FederatedHPA every minute.
const s8CronFederatedHPAOnFHPA = `
apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: nginx-cron-fhpa}
spec:
  scaleTargetRef: {apiVersion: autoscaling.karmada.io/v1alpha1, kind: FederatedHPA, name: nginx}
  rules:
    - {name: scale-up, schedule: "*/1 * * * *", targetMinReplicas: 5, targetMaxReplicas: 10, timeZone: Asia/Shanghai}
`

// decode reads a manifest strictly, so a misspelt JSON name fails the test.
func decode[T any](t *testing.T, manifest string) *T {
	t.Helper()
	obj := new(T)
	if err := yaml.UnmarshalStrict([]byte(manifest), obj); err != nil {
		t.Fatalf("decoding manifest: %v", err)
	}
	return obj
}

// validFHPA is s8FederatedHPA, defaulted as the API server does before
// validation.
func validFHPA(t *testing.T) *autoscalingv1alpha1.FederatedHPA {
	f := decode[autoscalingv1alpha1.FederatedHPA](t, s8FederatedHPA)
	f.Namespace = "default"
	autoscalingv1alpha1.SetObjectDefaults_FederatedHPA(f)
	return f
}

func TestValidateFederatedHPA(t *testing.T) {
	t.Parallel()
	q := resource.MustParse
	tests := []struct {
		name    string
		mutate  func(*autoscalingv1alpha1.FederatedHPA)
		wantErr string // a field path (and error type) in the errors; "" for valid
	}{
		{"sample manifest", func(*autoscalingv1alpha1.FederatedHPA) {}, ""},
		{"no behavior", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Behavior = nil }, ""},
		{"missing namespace", func(f *autoscalingv1alpha1.FederatedHPA) { f.Namespace = "" }, "metadata.namespace: Required"},
		{"bad name", func(f *autoscalingv1alpha1.FederatedHPA) { f.Name = "Nginx_1" }, "metadata.name: Invalid"},
		{"minReplicas 0", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.MinReplicas = ptr.To[int32](0) }, "spec.minReplicas: Invalid"},
		{"maxReplicas 0", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.MaxReplicas, f.Spec.MinReplicas = 0, nil }, "spec.maxReplicas: Invalid value: 0: must be greater than 0"},
		{"max below min", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.MinReplicas = ptr.To[int32](11) }, "must be greater than or equal to `minReplicas`"},
		{"target without kind", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.ScaleTargetRef.Kind = "" }, "spec.scaleTargetRef.kind: Required"},
		{"target kind with slash", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.ScaleTargetRef.Kind = "a/b" }, "spec.scaleTargetRef.kind: Invalid"},
		{"target without name", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.ScaleTargetRef.Name = "" }, "spec.scaleTargetRef.name: Required"},
		{"target name with percent", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.ScaleTargetRef.Name = "a%b" }, "spec.scaleTargetRef.name: Invalid"},
		{"target bad apiVersion", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.ScaleTargetRef.APIVersion = "a/b/c" }, "spec.scaleTargetRef.apiVersion: Invalid"},
		{"metric without type", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Metrics[0].Type = "" }, "spec.metrics[0].type: Required"},
		{"metric unknown type", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Metrics[0].Type = "Magic" }, "spec.metrics[0].type: Unsupported"},
		{"metric source missing", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Metrics[0].Type = autoscalingv2.PodsMetricSourceType }, "spec.metrics[0].pods: Required"},
		{"metric extra source", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0].Pods = &autoscalingv2.PodsMetricSource{}
		}, "spec.metrics[0].pods: Forbidden"},
		{"resource without name", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Metrics[0].Resource.Name = "" }, "spec.metrics[0].resource.name: Required"},
		{"resource bad name", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Metrics[0].Resource.Name = "c p u" }, "spec.metrics[0].resource.name: Invalid"},
		{"resource without target", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0].Resource.Target.AverageUtilization = nil
		}, "spec.metrics[0].resource.target.averageUtilization: Required"},
		{"resource both targets", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0].Resource.Target.AverageValue = ptr.To(q("100m"))
		}, "spec.metrics[0].resource.target.averageValue: Forbidden"},
		{"utilization 0", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](0)
		}, "spec.metrics[0].resource.target.averageUtilization: Invalid"},
		{"target type missing", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Metrics[0].Resource.Target.Type = "" }, "spec.metrics[0].resource.target.type: Required"},
		{"target type unknown", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Metrics[0].Resource.Target.Type = "Most" }, "spec.metrics[0].resource.target.type: Unsupported"},
		{"container resource without container", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
				Name: "cpu", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}
		}, "spec.metrics[0].containerResource.container: Required"},
		{"pods without averageValue", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(q("1"))}}}
		}, "spec.metrics[0].pods.target.averageValue: Required"},
		{"pods metric without name", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("1"))}}}
		}, "spec.metrics[0].pods.metric.name: Required"},
		{"pods metric bad selector", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "qps", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a b": "c"}}},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("1"))}}}
		}, "spec.metrics[0].pods.metric.selector.matchLabels"},
		{"negative value", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("-1"))}}}
		}, "spec.metrics[0].pods.target.averageValue: Invalid"},
		{"object without target value", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
				DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "nginx"},
				Metric:          autoscalingv2.MetricIdentifier{Name: "rps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType}}}
		}, "spec.metrics[0].object.target.averageValue: Required"},
		{"object without described kind", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
				DescribedObject: autoscalingv2.CrossVersionObjectReference{Name: "nginx"},
				Metric:          autoscalingv2.MetricIdentifier{Name: "rps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(q("10"))}}}
		}, "spec.metrics[0].object.describedObject.kind: Required"},
		{"external both targets", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(q("10")), AverageValue: ptr.To(q("1"))}}}
		}, "spec.metrics[0].external.target.value: Forbidden"},
		{"external without target", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "queue"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType}}}
		}, "spec.metrics[0].external.target.averageValue: Required"},
		{"negative window", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Behavior.ScaleUp.StabilizationWindowSeconds = ptr.To[int32](-1)
		}, "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid"},
		{"window too long", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Behavior.ScaleDown.StabilizationWindowSeconds = ptr.To[int32](3601)
		}, "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid"},
		{"bad select policy", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Behavior.ScaleUp.SelectPolicy = ptr.To[autoscalingv2.ScalingPolicySelect]("Median")
		}, "spec.behavior.scaleUp.selectPolicy: Unsupported"},
		{"negative tolerance", func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Behavior.ScaleUp.Tolerance = ptr.To(q("-0.1"))
		}, "spec.behavior.scaleUp.tolerance: Invalid"},
		{"no policies", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Behavior.ScaleDown.Policies = nil }, "spec.behavior.scaleDown.policies: Required"},
		{"bad policy type", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Behavior.ScaleUp.Policies[0].Type = "Nodes" }, "spec.behavior.scaleUp.policies[0].type: Unsupported"},
		{"policy value 0", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Behavior.ScaleUp.Policies[1].Value = 0 }, "spec.behavior.scaleUp.policies[1].value: Invalid"},
		{"policy period 0", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Behavior.ScaleDown.Policies[0].PeriodSeconds = 0 }, "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid"},
		{"policy period too long", func(f *autoscalingv1alpha1.FederatedHPA) { f.Spec.Behavior.ScaleDown.Policies[0].PeriodSeconds = 1801 }, "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := validFHPA(t)
			tc.mutate(f)
			validationtest.Expect(t, ValidateFederatedHPA(f).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateFederatedHPAUpdate(t *testing.T) {
	t.Parallel()
	old := validFHPA(t)
	old.ResourceVersion = "1"
	f := old.DeepCopy()
	f.Spec.MaxReplicas = 20
	validationtest.Expect(t, ValidateFederatedHPAUpdate(f, old).ToAggregate(), "")
	f.Spec.MaxReplicas = 0
	validationtest.Expect(t, ValidateFederatedHPAUpdate(f, old).ToAggregate(), "spec.maxReplicas")
	f = old.DeepCopy()
	f.Namespace = "other"
	validationtest.Expect(t, ValidateFederatedHPAUpdate(f, old).ToAggregate(), "metadata.namespace")

	f = old.DeepCopy()
	f.Status.CurrentReplicas, f.Status.DesiredReplicas = 3, 4
	validationtest.Expect(t, ValidateFederatedHPAStatusUpdate(f, old).ToAggregate(), "")
	f.Status.DesiredReplicas = -1
	validationtest.Expect(t, ValidateFederatedHPAStatusUpdate(f, old).ToAggregate(), "status.desiredReplicas")
}

func validCron(t *testing.T, manifest string) *autoscalingv1alpha1.CronFederatedHPA {
	c := decode[autoscalingv1alpha1.CronFederatedHPA](t, manifest)
	c.Namespace = "default"
	autoscalingv1alpha1.SetObjectDefaults_CronFederatedHPA(c)
	return c
}

func TestValidateCronFederatedHPA(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		manifest string
		mutate   func(*autoscalingv1alpha1.CronFederatedHPA)
		wantErr  string
	}{
		{"on Deployment", s8CronFederatedHPA, func(*autoscalingv1alpha1.CronFederatedHPA) {}, ""},
		{"on FederatedHPA", s8CronFederatedHPAOnFHPA, func(*autoscalingv1alpha1.CronFederatedHPA) {}, ""},
		{"undefaulted", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) {
			c.Spec.Rules[0].SuccessfulHistoryLimit, c.Spec.Rules[0].FailedHistoryLimit, c.Spec.Rules[0].Suspend = nil, nil, nil
		}, ""},
		{"descriptor schedule", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].Schedule = "@hourly" }, ""},
		{"only targetMaxReplicas", s8CronFederatedHPAOnFHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].TargetMinReplicas = nil }, ""},
		{"targetReplicas 0", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].TargetReplicas = ptr.To[int32](0) }, ""},
		{"missing namespace", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Namespace = "" }, "metadata.namespace: Required"},
		{"target without name", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.ScaleTargetRef.Name = "" }, "spec.scaleTargetRef.name: Required"},
		{"target without kind", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.ScaleTargetRef.Kind = "" }, "spec.scaleTargetRef.kind: Required"},
		{"own group but not FederatedHPA", s8CronFederatedHPAOnFHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) {
			c.Spec.ScaleTargetRef.Kind = "CronFederatedHPA"
		}, "spec.scaleTargetRef.kind: Invalid value: \"CronFederatedHPA\": invalid scaleTargetRef kind"},
		{"no rules", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules = nil }, "spec.rules: Required"},
		{"rule without name", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].Name = "" }, "spec.rules[0].name: Required"},
		{"rule name too long", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].Name = strings.Repeat("r", 33) }, "spec.rules[0].name: Too long"},
		{"duplicate rule name", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) {
			c.Spec.Rules = append(c.Spec.Rules, c.Spec.Rules[0])
		}, "spec.rules[1].name: Duplicate value"},
		{"missing schedule", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].Schedule = "" }, "spec.rules[0].schedule: Required"},
		{"bad schedule", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].Schedule = "*/1 * * *" }, "spec.rules[0].schedule: Invalid"},
		{"out of range schedule", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].Schedule = "61 * * * *" }, "spec.rules[0].schedule: Invalid"},
		{"bad time zone", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].TimeZone = ptr.To("Mars/Olympus") }, "spec.rules[0].timeZone: Invalid"},
		{"successful limit 0", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) {
			c.Spec.Rules[0].SuccessfulHistoryLimit = ptr.To[int32](0)
		}, "spec.rules[0].successfulHistoryLimit: Invalid"},
		{"failed limit 33", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].FailedHistoryLimit = ptr.To[int32](33) }, "spec.rules[0].failedHistoryLimit: Invalid"},
		{"failed limit 0", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].FailedHistoryLimit = ptr.To[int32](0) }, ""},
		{"no targetReplicas", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].TargetReplicas = nil }, "spec.rules[0].targetReplicas: Required"},
		{"negative targetReplicas", s8CronFederatedHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].TargetReplicas = ptr.To[int32](-1) }, "spec.rules[0].targetReplicas: Invalid"},
		{"FederatedHPA without bounds", s8CronFederatedHPAOnFHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) {
			c.Spec.Rules[0].TargetMinReplicas, c.Spec.Rules[0].TargetMaxReplicas = nil, nil
		}, "spec.rules[0]: Required"},
		{"FederatedHPA min 0", s8CronFederatedHPAOnFHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].TargetMinReplicas = ptr.To[int32](0) }, "spec.rules[0].targetMinReplicas: Invalid"},
		{"FederatedHPA max 0", s8CronFederatedHPAOnFHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].TargetMaxReplicas = ptr.To[int32](0) }, "spec.rules[0].targetMaxReplicas: Invalid"},
		{"FederatedHPA min above max", s8CronFederatedHPAOnFHPA, func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].TargetMinReplicas = ptr.To[int32](11) }, "spec.rules[0].targetMinReplicas: Invalid value: 11: must be less than or equal to targetMaxReplicas"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := validCron(t, tc.manifest)
			tc.mutate(c)
			validationtest.Expect(t, ValidateCronFederatedHPA(c).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateCronFederatedHPAUpdate(t *testing.T) {
	t.Parallel()
	old := validCron(t, s8CronFederatedHPA)
	old.ResourceVersion = "1"
	c := old.DeepCopy()
	c.Spec.Rules[0].TargetReplicas = ptr.To[int32](3)
	validationtest.Expect(t, ValidateCronFederatedHPAUpdate(c, old).ToAggregate(), "")
	c.Spec.Rules[0].Schedule = "never"
	validationtest.Expect(t, ValidateCronFederatedHPAUpdate(c, old).ToAggregate(), "spec.rules[0].schedule")
	c = old.DeepCopy()
	c.Name = "renamed"
	validationtest.Expect(t, ValidateCronFederatedHPAUpdate(c, old).ToAggregate(), "metadata.name")
}
