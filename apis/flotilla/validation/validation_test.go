package validation

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/internal/validationtest"
)

// threeStages is the strategy of the README: a canary cluster, a region by
// label, then the rest, with an approval and a wait between.
const threeStages = `
apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: three-stages}
spec:
  stages:
  - name: canary
    clusters: {names: [member1]}
    maxConcurrency: 1
    soakTime: 5m
    progressDeadline: 10m
    maxFailures: 0
    after: [{type: Approval}]
  - name: region
    clusters:
      names: [member2]
      labelSelector: {matchLabels: {region: eu}}
      orderByLabel: topology.kubernetes.io/zone
    maxConcurrency: 50%
    before: [{type: Wait, duration: 10m}]
  - name: rest
    clusters: {labelSelector: {matchExpressions: [{key: region, operator: NotIn, values: [eu]}]}}
`

func validStrategy(t *testing.T) *flotillav1alpha1.RolloutStrategy {
	t.Helper()
	s := &flotillav1alpha1.RolloutStrategy{}
	if err := yaml.UnmarshalStrict([]byte(threeStages), s); err != nil {
		t.Fatalf("decoding manifest: %v", err)
	}
	return s
}

func TestValidateRolloutStrategy(t *testing.T) {
	t.Parallel()
	type rs = flotillav1alpha1.RolloutStrategy
	stage := func(s *rs, i int) *flotillav1alpha1.RolloutStage { return &s.Spec.Stages[i] }
	dur := func(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
	conc := func(c intstr.IntOrString) func(*rs) { return func(s *rs) { stage(s, 0).MaxConcurrency = &c } }
	tests := []struct {
		name    string
		mutate  func(*rs)
		wantErr string
	}{
		{"valid", func(*rs) {}, ""},
		{"namespaced", func(s *rs) { s.Namespace = "default" }, "metadata.namespace: Forbidden"},
		{"bad name", func(s *rs) { s.Name = "Three" }, "metadata.name: Invalid"},
		{"no stages", func(s *rs) { s.Spec.Stages = nil }, "spec.stages: Required value"},
		{"twenty stages", func(s *rs) {
			s.Spec.Stages = nil
			for i := range flotillav1alpha1.MaxStages {
				s.Spec.Stages = append(s.Spec.Stages, flotillav1alpha1.RolloutStage{Name: fmt.Sprintf("s%d", i), Clusters: flotillav1alpha1.StageClusters{Names: []string{fmt.Sprintf("m%d", i)}}})
			}
		}, ""},
		{"too many stages", func(s *rs) {
			for i := range flotillav1alpha1.MaxStages {
				s.Spec.Stages = append(s.Spec.Stages, flotillav1alpha1.RolloutStage{Name: fmt.Sprintf("s%d", i), Clusters: flotillav1alpha1.StageClusters{Names: []string{fmt.Sprintf("m%d", i)}}})
			}
		}, "spec.stages: Too many: 23: must have at most 20 items"},
		{"stage without name", func(s *rs) { stage(s, 1).Name = "" }, "spec.stages[1].name: Required value"},
		{"duplicate stage name", func(s *rs) { stage(s, 1).Name = "canary" }, `spec.stages[1].name: Duplicate value: "canary"`},
		{"bad stage name", func(s *rs) { stage(s, 2).Name = "Rest" }, `spec.stages[2].name: Invalid value: "Rest"`},
		{"no clusters", func(s *rs) { stage(s, 0).Clusters = flotillav1alpha1.StageClusters{OrderByLabel: "region"} }, "spec.stages[0].clusters: Required value: names or labelSelector"},
		{"empty selector selects", func(s *rs) {
			stage(s, 0).Clusters = flotillav1alpha1.StageClusters{LabelSelector: &metav1.LabelSelector{}}
		}, ""},
		{"bad selector", func(s *rs) { stage(s, 2).Clusters.LabelSelector.MatchExpressions[0].Operator = "Has" }, "spec.stages[2].clusters.labelSelector.matchExpressions[0].operator: Invalid value"},
		{"bad selector label", func(s *rs) { stage(s, 1).Clusters.LabelSelector.MatchLabels = map[string]string{"-x": "y"} }, "spec.stages[1].clusters.labelSelector.matchLabels: Invalid value"},
		{"bad order label", func(s *rs) { stage(s, 1).Clusters.OrderByLabel = "a b" }, `spec.stages[1].clusters.orderByLabel: Invalid value: "a b"`},
		{"empty cluster name", func(s *rs) { stage(s, 0).Clusters.Names = []string{""} }, "spec.stages[0].clusters.names[0]: Required value"},
		{"bad cluster name", func(s *rs) { stage(s, 0).Clusters.Names = []string{"Member1"} }, `spec.stages[0].clusters.names[0]: Invalid value: "Member1"`},
		{"duplicate cluster name", func(s *rs) { stage(s, 0).Clusters.Names = []string{"member1", "member1"} }, `spec.stages[0].clusters.names[1]: Duplicate value: "member1"`},
		{"cluster in two stages", func(s *rs) { stage(s, 1).Clusters.Names = []string{"member2", "member1"} }, `spec.stages[1].clusters.names[1]: Invalid value: "member1": overlaps stage 0`},
		{"concurrency 0", conc(intstr.FromInt32(0)), "spec.stages[0].maxConcurrency: Invalid value: 0: must be at least 1"},
		{"negative concurrency", conc(intstr.FromInt32(-2)), "spec.stages[0].maxConcurrency: Invalid value: -2"},
		{"concurrency 1%", conc(intstr.FromString("1%")), ""},
		{"concurrency 100%", conc(intstr.FromString("100%")), ""},
		{"concurrency 0%", conc(intstr.FromString("0%")), `spec.stages[0].maxConcurrency: Invalid value: "0%"`},
		{"concurrency 101%", conc(intstr.FromString("101%")), `spec.stages[0].maxConcurrency: Invalid value: "101%"`},
		{"concurrency not a percent", conc(intstr.FromString("half")), `spec.stages[0].maxConcurrency: Invalid value: "half"`},
		{"concurrency signed percent", conc(intstr.FromString("+5%")), `spec.stages[0].maxConcurrency: Invalid value: "+5%"`},
		{"zero soak", func(s *rs) { stage(s, 0).SoakTime = dur(0) }, ""},
		{"negative soak", func(s *rs) { stage(s, 0).SoakTime = dur(-time.Second) }, `spec.stages[0].soakTime: Invalid value: "-1s": must be at least 0`},
		{"zero deadline", func(s *rs) { stage(s, 0).ProgressDeadline = dur(0) }, `spec.stages[0].progressDeadline: Invalid value: "0s": must be more than 0`},
		{"negative deadline", func(s *rs) { stage(s, 0).ProgressDeadline = dur(-time.Minute) }, "spec.stages[0].progressDeadline: Invalid value"},
		{"negative failures", func(s *rs) { stage(s, 0).MaxFailures = ptr.To[int32](-1) }, "spec.stages[0].maxFailures: Invalid value: -1: must be at least 0"},
		{"unknown gate", func(s *rs) { stage(s, 0).After[0].Type = "Manual" }, `spec.stages[0].after[0].type: Unsupported value: "Manual"`},
		{"gate without type", func(s *rs) { stage(s, 0).After[0].Type = "" }, "spec.stages[0].after[0].type: Required value"},
		{"wait without duration", func(s *rs) { stage(s, 1).Before[0].Duration = nil }, "spec.stages[1].before[0].duration: Required value"},
		{"wait of zero", func(s *rs) { stage(s, 1).Before[0].Duration = dur(0) }, `spec.stages[1].before[0].duration: Invalid value: "0s"`},
		{"new clusters in their stage", func(s *rs) { s.Spec.NewClusters = flotillav1alpha1.NewClustersInStage }, ""},
		{"unknown new clusters policy", func(s *rs) { s.Spec.NewClusters = "Never" }, `spec.newClusters: Unsupported value: "Never"`},
		{"approval with duration", func(s *rs) { stage(s, 0).After[0].Duration = dur(time.Minute) }, "spec.stages[0].after[0].duration: Forbidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := validStrategy(t)
			tc.mutate(s)
			validationtest.Expect(t, ValidateRolloutStrategy(s).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateRolloutStrategyUpdate(t *testing.T) {
	t.Parallel()
	old := validStrategy(t)
	old.ResourceVersion = "1"
	s := old.DeepCopy()
	s.Spec.Stages = s.Spec.Stages[:1]
	validationtest.Expect(t, ValidateRolloutStrategyUpdate(s, old).ToAggregate(), "")
	s.Spec.Stages[0].After[0] = flotillav1alpha1.RolloutGate{Type: flotillav1alpha1.GateWait}
	validationtest.Expect(t, ValidateRolloutStrategyUpdate(s, old).ToAggregate(), "spec.stages[0].after[0].duration: Required value")
	s = old.DeepCopy()
	s.Name = "two-stages"
	validationtest.Expect(t, ValidateRolloutStrategyUpdate(s, old).ToAggregate(), "metadata.name")
}
