package validation

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/apis/policy/mutation"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// scenarioManifests are the policies of the acceptance scenarios (weighted
// division, placement variants, CRDs and dependencies, overrides, as in
// samples/) as a user writes them with kubectl.
var scenarioManifests = map[string]string{
	"weighted division": `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-propagation}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
          - {targetCluster: {clusterNames: [member1]}, weight: 1}
          - {targetCluster: {clusterNames: [member2]}, weight: 1}
`,
	"duplicated": `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-duplicated}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`,
	"label, field and exclude": `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-selected}
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      labelSelector: {matchLabels: {app: nginx}}
  placement:
    clusterAffinity:
      labelSelector: {matchLabels: {location: us}}
      fieldSelector:
        matchExpressions:
          - {key: provider, operator: In, values: [kind]}
          - {key: region, operator: NotIn, values: [eu-west]}
          - {key: zone, operator: In, values: [zone-a, zone-b]}
      exclude: [member1]
`,
	"ordered cluster groups": `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-groups}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    clusterAffinities:
      - affinityName: local-clusters
        clusterNames: [member1, member2]
      - affinityName: cloud-clusters
        clusterNames: [member3]
`,
	"overflow groups with Aggregated": `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-overflow}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    clusterAffinities:
      - affinityName: primary
        clusterNames: [member1, member2]
        overflowAffinities:
          - affinityName: overflow-1
            clusterNames: [member3]
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
`,
	"toleration": `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-tolerating}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    clusterAffinity: {clusterNames: [member1]}
    clusterTolerations: [{key: dedicated, value: special-user, effect: NoSchedule}]
`,
	"dynamic weight": `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-dynamic}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
`,
	"spread constraints": `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-spread}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    spreadConstraints:
      - {spreadByField: cluster, maxGroups: 2, minGroups: 1}
      - {spreadByField: region, maxGroups: 2, minGroups: 1}
      - {spreadByField: zone, minGroups: 1}
      - {spreadByField: provider}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
`,
	"priority and preemption": `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-important}
spec:
  priority: 10
  preemption: Always
  conflictResolution: Overwrite
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    clusterAffinity: {clusterNames: [member2]}
`,
	"cluster policy by kind": `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: all-deployments}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
`,
	"guestbook CRD": `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: guestbook-crd}
spec:
  resourceSelectors:
    - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: guestbooks.webapp.my.domain}
  placement:
    clusterAffinity: {clusterNames: [member1]}
`,
	"dependencies with failover": `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-with-deps}
spec:
  propagateDeps: true
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
  failover:
    application:
      decisionConditions: {tolerationSeconds: 120}
      purgeMode: Gracefully
    cluster: {purgeMode: Directly}
  suspension:
    dispatchingOnClusters: {clusterNames: [member2]}
`,
	"plaintext overrides": `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: guestbook-sample}
spec:
  resourceSelectors:
    - {apiVersion: webapp.my.domain/v1, kind: Guestbook}
  overrideRules:
    - targetCluster: {clusterNames: [member1]}
      overriders:
        plaintext:
          - {path: /spec/size, operator: replace, value: 4}
          - {path: /metadata/annotations, operator: add, value: {OverridePolicy: test}}
`,
	"image, command, args, labels, annotations": `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: myapp}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: myapp}
  overrideRules:
    - targetCluster: {clusterNames: [member1]}
      overriders:
        imageOverrider:
          - {component: Registry, operator: add, value: test-repo}
        commandOverrider:
          - {containerName: myapp, operator: add, value: [--parameter1=foo]}
        argsOverrider:
          - {containerName: myapp, operator: remove, value: [--parameter1=foo]}
        labelsOverrider:
          - {operator: add, value: {env: member1}}
        annotationsOverrider:
          - {operator: remove, value: {note: ""}}
    - overriders:
        imageOverrider:
          - predicate: {path: /spec/template/spec/initContainers/0/image}
            component: Tag
            operator: replace
            value: "1.0.1"
`,
	"field overrider": `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: app-config}
spec:
  resourceSelectors:
    - {apiVersion: v1, kind: ConfigMap, name: app-config}
  overrideRules:
    - targetCluster: {clusterNames: [member2]}
      overriders:
        fieldOverrider:
          - fieldPath: /data/config.yaml
            yaml:
              - {subPath: /db/host, operator: replace, value: db.member2}
              - {subPath: /debug, operator: remove}
          - fieldPath: /data/settings.json
            json:
              - {subPath: /replicas, operator: add, value: 3}
`,
	"cluster override policy": `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: all-deployments}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment}
  overrideRules:
    - overriders:
        labelsOverrider:
          - {operator: add, value: {flotilla.io/overridden: "true"}}
`,
	"federated resource quota": `
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: team-quota, namespace: team-a}
spec:
  overall: {cpu: "10", memory: 20Gi}
  staticAssignments:
    - {clusterName: member1, hard: {cpu: "4", memory: 8Gi}}
    - {clusterName: member2, hard: {cpu: "6", memory: 12Gi}}
`,
	"cluster taint policy": `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: not-ready}
spec:
  targetClusters: {clusterNames: [member1]}
  addOnConditions:
    - {conditionType: Ready, operator: NotIn, statusValues: ["True"]}
  removeOnConditions:
    - {conditionType: Ready, operator: In, statusValues: ["True"]}
  taints:
    - {key: not-ready, effect: NoSchedule}
`,
}

// admit decodes a manifest strictly (unknown fields fail, so every JSON name
// must match the API), defaults the namespace as kubectl does, mutates it as
// on create and validates it.
func admit(t *testing.T, manifest string) field.ErrorList {
	t.Helper()
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(manifest), &tm); err != nil {
		t.Fatalf("reading type: %v", err)
	}
	if tm.APIVersion != policyv1alpha1.SchemeGroupVersion.String() {
		t.Fatalf("apiVersion %q", tm.APIVersion)
	}
	decode := func(obj any) {
		t.Helper()
		if err := yaml.UnmarshalStrict([]byte(manifest), obj); err != nil {
			t.Fatalf("decoding %s: %v", tm.Kind, err)
		}
	}
	defaultNamespace := func(meta *metav1.ObjectMeta) {
		if meta.Namespace == "" {
			meta.Namespace = "default"
		}
	}
	switch tm.Kind {
	case "PropagationPolicy":
		pp := &policyv1alpha1.PropagationPolicy{}
		decode(pp)
		defaultNamespace(&pp.ObjectMeta)
		mutation.MutatePropagationPolicy(pp, true)
		return ValidatePropagationPolicy(pp)
	case "ClusterPropagationPolicy":
		cpp := &policyv1alpha1.ClusterPropagationPolicy{}
		decode(cpp)
		mutation.MutateClusterPropagationPolicy(cpp, true)
		return ValidateClusterPropagationPolicy(cpp)
	case "OverridePolicy":
		op := &policyv1alpha1.OverridePolicy{}
		decode(op)
		defaultNamespace(&op.ObjectMeta)
		mutation.MutateOverridePolicy(op)
		return ValidateOverridePolicy(op)
	case "ClusterOverridePolicy":
		cop := &policyv1alpha1.ClusterOverridePolicy{}
		decode(cop)
		return ValidateClusterOverridePolicy(cop)
	case "FederatedResourceQuota":
		q := &policyv1alpha1.FederatedResourceQuota{}
		decode(q)
		defaultNamespace(&q.ObjectMeta)
		return ValidateFederatedResourceQuota(q)
	case "ClusterTaintPolicy":
		ctp := &policyv1alpha1.ClusterTaintPolicy{}
		decode(ctp)
		return ValidateClusterTaintPolicy(ctp, false)
	}
	t.Fatalf("unknown kind %q", tm.Kind)
	return nil
}

func TestScenarioManifestsAreAdmitted(t *testing.T) {
	t.Parallel()
	for name, manifest := range scenarioManifests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkErrors(t, admit(t, manifest), nil)
		})
	}
}

func TestMisspelledFieldIsRejected(t *testing.T) {
	t.Parallel()
	manifest := `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: typo}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {excludeClusters: [member1]}}
`
	err := yaml.UnmarshalStrict([]byte(manifest), &policyv1alpha1.PropagationPolicy{})
	if err == nil {
		t.Fatal("excludeClusters is not the JSON name (exclude is), yet it decoded")
	}
}
