package interpreter

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

type aggregateCase struct {
	name       string
	obj        string
	items      func(t *testing.T) []workv1alpha2.AggregatedStatusItem
	wantStatus string // YAML; compared to the whole resulting status
}

func runAggregate(t *testing.T, tests []aggregateCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := obj(t, tc.obj)
			before := in.DeepCopy()
			got, err := newTestNative().AggregateStatus(in, tc.items(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(yamlMap(t, tc.wantStatus), statusMap(t, got)); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("input modified:\n%s", diff)
			}
		})
	}
}

func TestAggregateWorkloads(t *testing.T) {
	t.Parallel()
	deploy := `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, generation: 5}
status: {observedGeneration: 3, conditions: [{type: Available, status: "True"}]}`
	runAggregate(t, []aggregateCase{
		{
			name: "deployment sums, all caught up => observedGeneration = template generation",
			obj:  deploy,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", "{replicas: 2, readyReplicas: 2, updatedReplicas: 2, availableReplicas: 2, observedGeneration: 2, generation: 2, resourceTemplateGeneration: 5}"),
					item(t, "m2", "{replicas: 3, readyReplicas: 1, updatedReplicas: 3, availableReplicas: 1, unavailableReplicas: 2, observedGeneration: 7, generation: 7, resourceTemplateGeneration: 6}"),
				}
			},
			wantStatus: `{replicas: 5, readyReplicas: 3, updatedReplicas: 5, availableReplicas: 3, unavailableReplicas: 2,
observedGeneration: 5, conditions: [{type: Available, status: "True"}]}`,
		},
		{
			name: "deployment member behind its generation keeps observedGeneration",
			obj:  deploy,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", "{replicas: 2, observedGeneration: 1, generation: 2, resourceTemplateGeneration: 5}"),
				}
			},
			wantStatus: `{replicas: 2, observedGeneration: 3, conditions: [{type: Available, status: "True"}]}`,
		},
		{
			name: "deployment member built from old template keeps observedGeneration",
			obj:  deploy,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", "{replicas: 2, observedGeneration: 2, generation: 2, resourceTemplateGeneration: 4}"),
				}
			},
			wantStatus: `{replicas: 2, observedGeneration: 3, conditions: [{type: Available, status: "True"}]}`,
		},
		{
			name: "deployment member without status keeps observedGeneration",
			obj:  deploy,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", "{replicas: 2, observedGeneration: 2, generation: 2, resourceTemplateGeneration: 5}"),
					item(t, "m2", ""),
				}
			},
			wantStatus: `{replicas: 2, observedGeneration: 3, conditions: [{type: Available, status: "True"}]}`,
		},
		{
			name: "replicaset sums",
			obj:  "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, generation: 1}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", "{replicas: 1, readyReplicas: 1, availableReplicas: 1, observedGeneration: 1, generation: 1, resourceTemplateGeneration: 1}"),
					item(t, "m2", "{replicas: 2, readyReplicas: 1, availableReplicas: 0, observedGeneration: 1, generation: 1, resourceTemplateGeneration: 1}"),
				}
			},
			wantStatus: "{replicas: 3, readyReplicas: 2, availableReplicas: 1, observedGeneration: 1}",
		},
		{
			name: "statefulset sums",
			obj:  "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, generation: 2}\nstatus: {replicas: 9, currentRevision: r}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", "{replicas: 1, readyReplicas: 1, currentReplicas: 1, updatedReplicas: 1, availableReplicas: 1, observedGeneration: 1, generation: 1, resourceTemplateGeneration: 2}"),
					item(t, "m2", "{replicas: 2, readyReplicas: 2, currentReplicas: 2, updatedReplicas: 2, availableReplicas: 2, observedGeneration: 1, generation: 1, resourceTemplateGeneration: 2}"),
				}
			},
			wantStatus: "{replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3, availableReplicas: 3, observedGeneration: 2, currentRevision: r}",
		},
		{
			name: "daemonset sums",
			obj:  "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, generation: 1}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", "{currentNumberScheduled: 1, desiredNumberScheduled: 2, numberAvailable: 1, numberMisscheduled: 1, numberReady: 1, updatedNumberScheduled: 1, numberUnavailable: 1, observedGeneration: 1, generation: 1}"),
					item(t, "m2", "{currentNumberScheduled: 3, desiredNumberScheduled: 3, numberAvailable: 3, numberReady: 3, updatedNumberScheduled: 3, observedGeneration: 1, generation: 1}"),
				}
			},
			// resourceTemplateGeneration 0 < 1: observedGeneration stays unset.
			wantStatus: "{currentNumberScheduled: 4, desiredNumberScheduled: 5, numberAvailable: 4, numberMisscheduled: 1, numberReady: 4, updatedNumberScheduled: 4, numberUnavailable: 1}",
		},
	})
}

func TestAggregateNetworking(t *testing.T) {
	t.Parallel()
	runAggregate(t, []aggregateCase{
		{
			name: "loadbalancer service ingress dedup and sort",
			obj:  "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", "{loadBalancer: {ingress: [{ip: 10.0.0.2}, {hostname: b.example}]}}"),
					item(t, "m2", "{loadBalancer: {ingress: [{ip: 10.0.0.1}, {ip: 10.0.0.2}]}}"),
					item(t, "m3", ""),
				}
			},
			wantStatus: "{loadBalancer: {ingress: [{hostname: b.example}, {ip: 10.0.0.1}, {ip: 10.0.0.2}]}}",
		},
		{
			name: "clusterip service unchanged",
			obj:  "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: ClusterIP}\nstatus: {loadBalancer: {}}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{item(t, "m1", "{loadBalancer: {ingress: [{ip: 1.1.1.1}]}}")}
			},
			wantStatus: "{loadBalancer: {}}",
		},
		{
			name: "ingress dedup and sort",
			obj:  "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", "{loadBalancer: {ingress: [{ip: 2.2.2.2}]}}"),
					item(t, "m2", "{loadBalancer: {ingress: [{ip: 1.1.1.1}, {ip: 2.2.2.2}]}}"),
				}
			},
			wantStatus: "{loadBalancer: {ingress: [{ip: 1.1.1.1}, {ip: 2.2.2.2}]}}",
		},
	})
}

func TestAggregateJob(t *testing.T) {
	t.Parallel()
	job := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, generation: 1}"
	now := `"2026-01-02T03:04:05Z"`
	runAggregate(t, []aggregateCase{
		{
			name: "running: sums, start time only once all started",
			obj:  job,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", `{active: 1, failed: 1, startTime: "2026-01-01T00:00:10Z"}`),
					item(t, "m2", `{active: 2}`),
				}
			},
			wantStatus: "{active: 3, failed: 1}",
		},
		{
			name: "all completed: Complete + SuccessCriteriaMet, earliest start, latest completion",
			obj:  job,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", `{succeeded: 1, startTime: "2026-01-01T00:00:10Z", completionTime: "2026-01-01T00:05:00Z", conditions: [{type: Complete, status: "True"}]}`),
					item(t, "m2", `{succeeded: 2, startTime: "2026-01-01T00:00:05Z", completionTime: "2026-01-01T00:09:00Z", conditions: [{type: Complete, status: "True"}]}`),
				}
			},
			wantStatus: `succeeded: 3
startTime: "2026-01-01T00:00:05Z"
completionTime: "2026-01-01T00:09:00Z"
conditions:
- {type: SuccessCriteriaMet, status: "True", reason: Completed, message: Job completed, lastProbeTime: ` + now + `, lastTransitionTime: ` + now + `}
- {type: Complete, status: "True", reason: Completed, message: Job completed, lastProbeTime: ` + now + `, lastTransitionTime: ` + now + `}`,
		},
		{
			name: "one failed: Failed condition listing clusters",
			obj:  job,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", `{succeeded: 1, startTime: "2026-01-01T00:00:10Z", completionTime: "2026-01-01T00:05:00Z", conditions: [{type: Complete, status: "True"}]}`),
					item(t, "m2", `{failed: 6, startTime: "2026-01-01T00:00:05Z", conditions: [{type: Failed, status: "True"}]}`),
					item(t, "m3", `{failed: 6, startTime: "2026-01-01T00:00:07Z", conditions: [{type: Failed, status: "True"}]}`),
				}
			},
			wantStatus: `succeeded: 1
failed: 12
startTime: "2026-01-01T00:00:05Z"
conditions:
- {type: Failed, status: "True", reason: JobFailed, message: "Job executed failed in member clusters m2,m3", lastProbeTime: ` + now + `, lastTransitionTime: ` + now + `}`,
		},
		{
			name: "start time already set is kept",
			obj:  job + "\nstatus: {startTime: \"2025-12-31T00:00:00Z\"}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{item(t, "m1", `{active: 1, startTime: "2026-01-01T00:00:10Z"}`)}
			},
			wantStatus: `{active: 1, startTime: "2025-12-31T00:00:00Z"}`,
		},
		{
			name: "finished template job is skipped",
			obj:  job + "\nstatus: {succeeded: 1, conditions: [{type: Complete, status: \"True\"}]}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{item(t, "m1", `{failed: 1, conditions: [{type: Failed, status: "True"}]}`)}
			},
			wantStatus: `{succeeded: 1, conditions: [{type: Complete, status: "True"}]}`,
		},
		{
			name: "cronjob concatenates active and takes latest times",
			obj:  "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", `{active: [{name: j1}], lastScheduleTime: "2026-01-01T00:00:00Z", lastSuccessfulTime: "2026-01-01T00:10:00Z"}`),
					item(t, "m2", `{active: [{name: j2}], lastScheduleTime: "2026-01-01T01:00:00Z"}`),
				}
			},
			wantStatus: `{active: [{name: j1}, {name: j2}], lastScheduleTime: "2026-01-01T01:00:00Z", lastSuccessfulTime: "2026-01-01T00:10:00Z"}`,
		},
	})
}

func TestAggregateCore(t *testing.T) {
	t.Parallel()
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}"
	runAggregate(t, []aggregateCase{
		{
			name: "pod: Pending beats Running, container statuses concatenated (ready+state)",
			obj:  pod,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", `{phase: Running, podIP: 1.1.1.1, containerStatuses: [{name: c, image: i, ready: true, restartCount: 2, state: {running: {}}}]}`),
					item(t, "m2", `{phase: Pending, containerStatuses: [{name: c, ready: false, state: {waiting: {reason: Pull}}}]}`),
				}
			},
			wantStatus: `phase: Pending
containerStatuses:
- {name: "", image: "", imageID: "", restartCount: 0, ready: true, lastState: {}, state: {running: {startedAt: null}}}
- {name: "", image: "", imageID: "", restartCount: 0, ready: false, lastState: {}, state: {waiting: {reason: Pull}}}`,
		},
		{
			name: "pod: Failed beats everything",
			obj:  pod,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{item(t, "m1", "{phase: Pending}"), item(t, "m2", "{phase: Failed}")}
			},
			wantStatus: "{phase: Failed}",
		},
		{
			name: "pod: member without status counts as Pending",
			obj:  pod,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{item(t, "m1", "{phase: Succeeded}"), item(t, "m2", "")}
			},
			wantStatus: "{phase: Pending}",
		},
		{
			name: "pod: Running beats Succeeded",
			obj:  pod,
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{item(t, "m1", "{phase: Succeeded}"), item(t, "m2", "{phase: Running}")}
			},
			wantStatus: "{phase: Running}",
		},
		{
			name: "pvc: Pending beats Bound",
			obj:  "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{item(t, "m1", "{phase: Bound}"), item(t, "m2", "{phase: Pending}")}
			},
			wantStatus: "{phase: Pending}",
		},
		{
			name: "pv: Available beats Bound",
			obj:  "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{item(t, "m1", "{phase: Bound}"), item(t, "m2", "{phase: Available}")}
			},
			wantStatus: "{phase: Available}",
		},
		{
			name: "pdb sums and keys disrupted pods by cluster",
			obj:  "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nstatus: {observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{
					item(t, "m1", `{disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptedPods: {p1: "2026-01-01T00:00:00Z"}}`),
					item(t, "m2", "{disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1}"),
				}
			},
			wantStatus: `{observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 4, desiredHealthy: 3, expectedPods: 4, disruptedPods: {m1/p1: "2026-01-01T00:00:00Z"}}`,
		},
		{
			name: "hpa sums current and desired",
			obj:  "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nstatus: {desiredReplicas: 0, currentMetrics: []}",
			items: func(t *testing.T) []workv1alpha2.AggregatedStatusItem {
				return []workv1alpha2.AggregatedStatusItem{item(t, "m1", "{currentReplicas: 2, desiredReplicas: 3}"), item(t, "m2", "{currentReplicas: 1, desiredReplicas: 1}")}
			},
			wantStatus: "{currentReplicas: 3, desiredReplicas: 4, currentMetrics: []}",
		},
	})
}

func TestAggregateUnsupported(t *testing.T) {
	t.Parallel()
	if _, err := NewNative().AggregateStatus(obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}"), nil); err == nil {
		t.Error("want error for ConfigMap")
	}
}
