package v1alpha1

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// wireDocuments use every field of every kind with Karmada's JSON names; they
// must decode strictly and encode back to the same JSON.
var wireDocuments = map[string]struct {
	obj any
	doc string
}{
	"PropagationPolicy": {&PropagationPolicy{}, `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: pp, namespace: default}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, namespace: default, name: nginx, labelSelector: {matchLabels: {app: nginx}}}
  association: true
  propagateDeps: true
  placement:
    clusterAffinity:
      labelSelector: {matchLabels: {location: us}}
      fieldSelector: {matchExpressions: [{key: region, operator: In, values: [us-east]}]}
      clusterNames: [member1]
      exclude: [member2]
    clusterAffinities:
      - affinityName: primary
        clusterNames: [member1]
        overflowAffinities: [{affinityName: burst, clusterNames: [member3]}]
    clusterTolerations: [{key: dedicated, operator: Equal, value: x, effect: NoSchedule}]
    spreadConstraints: [{spreadByField: cluster, maxGroups: 2, minGroups: 1}, {spreadByLabel: rack, minGroups: 1}]
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList: [{targetCluster: {clusterNames: [member1]}, weight: 2}]
        dynamicWeight: AvailableReplicas
    workloadAffinity:
      affinity: {groupByLabelKey: app.group}
      antiAffinity: {groupByLabelKey: app.replica}
  priority: 5
  preemption: Always
  dependentOverrides: [op-a]
  schedulerName: default-scheduler
  failover:
    application:
      decisionConditions: {tolerationSeconds: 60}
      purgeMode: Gracefully
      gracePeriodSeconds: 600
      statePreservation: {rules: [{aliasLabelName: example.com/replicas, jsonPath: "{.availableReplicas}"}]}
    cluster:
      purgeMode: Directly
      statePreservation: {rules: [{aliasLabelName: offset, jsonPath: "{.offset}"}]}
  conflictResolution: Overwrite
  activationPreference: Lazy
  suspension: {dispatching: false, dispatchingOnClusters: {clusterNames: [member1]}}
  preserveResourcesOnDeletion: true
  schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: high}
`},
	"OverridePolicy": {&OverridePolicy{}, `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: op, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
    - targetCluster: {clusterNames: [member1]}
      overriders:
        plaintext: [{path: /spec/replicas, operator: replace, value: 3}]
        imageOverrider: [{predicate: {path: /spec/template/spec/containers/0/image}, component: Registry, operator: add, value: test-repo}]
        commandOverrider: [{containerName: app, operator: add, value: [--a]}]
        argsOverrider: [{containerName: app, operator: remove, value: [--b]}]
        labelsOverrider: [{operator: add, value: {env: prod}}]
        annotationsOverrider: [{operator: replace, value: {note: x}}]
        fieldOverrider:
          - fieldPath: /data/config.json
            json: [{subPath: /a, operator: add, value: {b: 1}}]
          - fieldPath: /data/config.yaml
            yaml: [{subPath: /c, operator: remove}]
  targetCluster: {clusterNames: [member2]}
  overriders:
    plaintext: [{path: /metadata/labels/x, operator: remove}]
`},
	"FederatedResourceQuota": {&FederatedResourceQuota{}, `
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: q, namespace: default}
spec:
  overall: {cpu: "10"}
  staticAssignments: [{clusterName: member1, hard: {cpu: "4"}}]
status:
  overall: {cpu: "10"}
  overallUsed: {cpu: "3"}
  aggregatedStatus: [{clusterName: member1, hard: {cpu: "4"}, used: {cpu: "3"}}]
`},
	"ClusterTaintPolicy": {&ClusterTaintPolicy{}, `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: ctp}
spec:
  targetClusters: {clusterNames: [member1]}
  addOnConditions: [{conditionType: Ready, operator: NotIn, statusValues: ["True"]}]
  removeOnConditions: [{conditionType: Ready, operator: In, statusValues: ["True"]}]
  taints: [{key: not-ready, effect: PreferNoExecute, value: "x"}]
`},
}

func TestWireNames(t *testing.T) {
	t.Parallel()
	for kind, tc := range wireDocuments {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			if err := yaml.UnmarshalStrict([]byte(tc.doc), tc.obj); err != nil {
				t.Fatalf("strict decode: %v", err)
			}
			encoded, err := json.Marshal(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			var got, want map[string]any
			if err := json.Unmarshal(encoded, &got); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tc.doc), &want); err != nil {
				t.Fatal(err)
			}
			delete(got["metadata"].(map[string]any), "creationTimestamp")
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip changed the document:\n got  %v\n want %v", got, want)
			}
		})
	}
}

func TestSchemeDefaults(t *testing.T) {
	t.Parallel()
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	pp := &PropagationPolicy{Spec: PropagationSpec{
		Placement: Placement{ReplicaScheduling: &ReplicaSchedulingStrategy{}},
		Failover: &FailoverBehavior{
			Application: &ApplicationFailoverBehavior{},
			Cluster:     &ClusterFailoverBehavior{},
		},
	}}
	scheme.Default(pp)
	want := PropagationSpec{
		Placement:          Placement{ReplicaScheduling: &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDivided}},
		Priority:           ptr.To[int32](0),
		Preemption:         PreemptNever,
		SchedulerName:      DefaultSchedulerName,
		ConflictResolution: ConflictAbort,
		Failover: &FailoverBehavior{
			Application: &ApplicationFailoverBehavior{
				DecisionConditions: DecisionConditions{TolerationSeconds: ptr.To[int32](300)},
				PurgeMode:          PurgeModeGracefully,
			},
			Cluster: &ClusterFailoverBehavior{PurgeMode: PurgeModeGracefully},
		},
	}
	if !reflect.DeepEqual(pp.Spec, want) {
		t.Errorf("defaulted spec:\n got  %+v\n want %+v", pp.Spec, want)
	}

	// Explicit values are kept.
	cpp := &ClusterPropagationPolicy{Spec: PropagationSpec{Priority: ptr.To[int32](3), Preemption: PreemptAlways, SchedulerName: "s", ConflictResolution: ConflictOverwrite}}
	scheme.Default(cpp)
	if *cpp.Spec.Priority != 3 || cpp.Spec.Preemption != PreemptAlways || cpp.Spec.SchedulerName != "s" || cpp.Spec.ConflictResolution != ConflictOverwrite {
		t.Errorf("explicit values changed: %+v", cpp.Spec)
	}

	for _, gvk := range []string{"PropagationPolicy", "ClusterPropagationPolicy", "OverridePolicy", "ClusterOverridePolicy", "FederatedResourceQuota", "ClusterTaintPolicy"} {
		for _, kind := range []string{gvk, gvk + "List"} {
			if !scheme.Recognizes(SchemeGroupVersion.WithKind(kind)) {
				t.Errorf("scheme does not recognise %s", kind)
			}
		}
	}
}
