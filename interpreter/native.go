package interpreter

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// RetainReplicasLabel on a Deployment template asks Retain to keep the
// member's spec.replicas (value RetainReplicasValue).
const (
	RetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas"
	RetainReplicasValue = "true"
)

// The kinds with native hooks.
var (
	deploymentGVK    = appsv1.SchemeGroupVersion.WithKind("Deployment")
	replicaSetGVK    = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	statefulSetGVK   = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	daemonSetGVK     = appsv1.SchemeGroupVersion.WithKind("DaemonSet")
	jobGVK           = batchv1.SchemeGroupVersion.WithKind("Job")
	cronJobGVK       = batchv1.SchemeGroupVersion.WithKind("CronJob")
	podGVK           = corev1.SchemeGroupVersion.WithKind("Pod")
	serviceGVK       = corev1.SchemeGroupVersion.WithKind("Service")
	saGVK            = corev1.SchemeGroupVersion.WithKind("ServiceAccount")
	pvcGVK           = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
	pvGVK            = corev1.SchemeGroupVersion.WithKind("PersistentVolume")
	secretGVK        = corev1.SchemeGroupVersion.WithKind("Secret")
	ingressGVK       = networkingv1.SchemeGroupVersion.WithKind("Ingress")
	pdbGVK           = policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
	hpaGVK           = autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
	serviceImportGVK = multiclusterv1alpha1.SchemeGroupVersion.WithKind(multiclusterv1alpha1.ServiceImportKind)
)

type (
	replicaFunc    func(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error)
	reviseFunc     func(obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error)
	retainFunc     func(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)
	aggregateFunc  func(n *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error)
	reflectFunc    func(obj *unstructured.Unstructured) (*runtime.RawExtension, error)
	healthFunc     func(obj *unstructured.Unstructured) (bool, error)
	dependencyFunc func(obj *unstructured.Unstructured) ([]DependentObjectReference, error)
)

// Native is the built-in interpreter for well-known Kubernetes kinds (Karmada's
// default interpreter; docs/compatibility.md, The resource interpreter). The
// zero value is not usable; use NewNative.
type Native struct {
	// now stamps the conditions AggregateStatus adds; a field so tests can fix it.
	now        func() time.Time
	replica    map[schema.GroupVersionKind]replicaFunc
	revise     map[schema.GroupVersionKind]reviseFunc
	retain     map[schema.GroupVersionKind]retainFunc
	aggregate  map[schema.GroupVersionKind]aggregateFunc
	reflect    map[schema.GroupVersionKind]reflectFunc
	health     map[schema.GroupVersionKind]healthFunc
	dependency map[schema.GroupVersionKind]dependencyFunc
}

// Native implements Interpreter.
var _ Interpreter = &Native{}

// NativeOption configures a Native interpreter.
type NativeOption func(*Native)

// WithClock sets the clock used to stamp aggregated conditions.
func WithClock(now func() time.Time) NativeOption {
	return func(n *Native) { n.now = now }
}

// NewNative returns the native interpreter.
func NewNative(opts ...NativeOption) *Native {
	n := &Native{now: time.Now}
	for _, o := range opts {
		o(n)
	}
	n.replica = map[schema.GroupVersionKind]replicaFunc{
		deploymentGVK:  n.workloadReplicas,
		replicaSetGVK:  n.workloadReplicas,
		statefulSetGVK: n.workloadReplicas,
		jobGVK:         n.jobReplicas,
		podGVK:         n.podReplicas,
	}
	n.revise = map[schema.GroupVersionKind]reviseFunc{
		deploymentGVK:  reviseSpecField("replicas"),
		replicaSetGVK:  reviseSpecField("replicas"),
		statefulSetGVK: reviseSpecField("replicas"),
		jobGVK:         reviseSpecField("parallelism"),
	}
	n.retain = map[schema.GroupVersionKind]retainFunc{
		deploymentGVK: retainWorkloadReplicas,
		podGVK:        retainPod,
		serviceGVK:    retainService,
		saGVK:         retainServiceAccount,
		pvcGVK:        retainPersistentVolumeClaim,
		pvGVK:         retainPersistentVolume,
		jobGVK:        retainJob,
		secretGVK:     retainSecret,
	}
	n.aggregate = map[schema.GroupVersionKind]aggregateFunc{
		deploymentGVK:  aggregateDeployment,
		replicaSetGVK:  aggregateReplicaSet,
		statefulSetGVK: aggregateStatefulSet,
		daemonSetGVK:   aggregateDaemonSet,
		serviceGVK:     aggregateService,
		ingressGVK:     aggregateIngress,
		jobGVK:         aggregateJob,
		cronJobGVK:     aggregateCronJob,
		podGVK:         aggregatePod,
		pvGVK:          aggregatePersistentVolume,
		pvcGVK:         aggregatePersistentVolumeClaim,
		pdbGVK:         aggregatePDB,
		hpaGVK:         aggregateHPA,
	}
	n.reflect = map[schema.GroupVersionKind]reflectFunc{
		deploymentGVK:  reflectDeployment,
		replicaSetGVK:  reflectReplicaSet,
		statefulSetGVK: reflectStatefulSet,
		daemonSetGVK:   reflectDaemonSet,
		serviceGVK:     reflectService,
		ingressGVK:     reflectWholeStatus,
		jobGVK:         reflectJob,
		pdbGVK:         reflectPDB,
		hpaGVK:         reflectHPA,
	}
	n.health = map[schema.GroupVersionKind]healthFunc{
		deploymentGVK:  deploymentHealthy,
		statefulSetGVK: statefulSetHealthy,
		replicaSetGVK:  replicaSetHealthy,
		daemonSetGVK:   daemonSetHealthy,
		serviceGVK:     serviceHealthy,
		ingressGVK:     ingressHealthy,
		pvcGVK:         pvcHealthy,
		podGVK:         podHealthy,
		pdbGVK:         pdbHealthy,
	}
	n.dependency = map[schema.GroupVersionKind]dependencyFunc{
		deploymentGVK:    podTemplateDependencies("spec", "template"),
		replicaSetGVK:    podTemplateDependencies("spec", "template"),
		daemonSetGVK:     podTemplateDependencies("spec", "template"),
		jobGVK:           podTemplateDependencies("spec", "template"),
		cronJobGVK:       podTemplateDependencies("spec", "jobTemplate", "spec", "template"),
		statefulSetGVK:   statefulSetDependencies,
		podGVK:           podDependencies,
		ingressGVK:       ingressDependencies,
		serviceImportGVK: serviceImportDependencies,
	}
	return n
}

// HookEnabled implements Interpreter. InterpretStatus is enabled for every
// kind: kinds without a dedicated rule reflect their whole status.
func (n *Native) HookEnabled(gvk schema.GroupVersionKind, operation Operation) bool {
	var ok bool
	switch operation {
	case InterpretReplica:
		_, ok = n.replica[gvk]
	case ReviseReplica:
		_, ok = n.revise[gvk]
	case Retain:
		_, ok = n.retain[gvk]
	case AggregateStatus:
		_, ok = n.aggregate[gvk]
	case InterpretStatus:
		ok = true
	case InterpretHealth:
		_, ok = n.health[gvk]
	case InterpretDependency:
		_, ok = n.dependency[gvk]
	}
	return ok
}

// GetReplicas implements Interpreter.
func (n *Native) GetReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	f, ok := n.replica[obj.GroupVersionKind()]
	if !ok {
		return 0, nil, unsupported(obj, InterpretReplica)
	}
	return f(obj)
}

// ReviseReplica implements Interpreter.
func (n *Native) ReviseReplica(obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	f, ok := n.revise[obj.GroupVersionKind()]
	if !ok {
		return nil, unsupported(obj, ReviseReplica)
	}
	return f(obj, replicas)
}

// Retain implements Interpreter.
func (n *Native) Retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	f, ok := n.retain[desired.GroupVersionKind()]
	if !ok {
		return nil, unsupported(desired, Retain)
	}
	return f(desired.DeepCopy(), observed)
}

// AggregateStatus implements Interpreter.
func (n *Native) AggregateStatus(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	f, ok := n.aggregate[obj.GroupVersionKind()]
	if !ok {
		return nil, unsupported(obj, AggregateStatus)
	}
	return f(n, obj.DeepCopy(), items)
}

// GetComponents implements Interpreter. No native kind is made of several
// pod templates: only customizations and webhooks interpret components.
func (n *Native) GetComponents(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	return nil, unsupported(obj, InterpretComponent)
}

// ReflectStatus implements Interpreter. Kinds without a dedicated rule
// reflect their whole .status; an absent or empty status reflects nil.
func (n *Native) ReflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	if f, ok := n.reflect[obj.GroupVersionKind()]; ok {
		return f(obj)
	}
	return reflectWholeStatus(obj)
}

// InterpretHealth implements Interpreter. Kinds without a rule are Unknown.
func (n *Native) InterpretHealth(obj *unstructured.Unstructured) (workv1alpha2.ResourceHealth, error) {
	f, ok := n.health[obj.GroupVersionKind()]
	if !ok {
		return workv1alpha2.ResourceUnknown, nil
	}
	healthy, err := f(obj)
	if err != nil {
		return workv1alpha2.ResourceUnknown, err
	}
	if healthy {
		return workv1alpha2.ResourceHealthy, nil
	}
	return workv1alpha2.ResourceUnhealthy, nil
}

// GetDependencies implements Interpreter.
func (n *Native) GetDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	f, ok := n.dependency[obj.GroupVersionKind()]
	if !ok {
		return nil, unsupported(obj, InterpretDependency)
	}
	return f(obj)
}

func unsupported(obj *unstructured.Unstructured, op Operation) error {
	return fmt.Errorf("native interpreter has no %s hook for %s", op, obj.GroupVersionKind())
}

// fromUnstructured converts obj (or a part of it) to a typed value.
func fromUnstructured(in map[string]interface{}, out interface{}) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(in, out); err != nil {
		return fmt.Errorf("converting from unstructured: %w", err)
	}
	return nil
}

// setStatus replaces obj's .status with the typed status, with the same
// omitempty handling as the typed object's JSON encoding.
func setStatus(obj *unstructured.Unstructured, status interface{}) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	if err != nil {
		return nil, fmt.Errorf("converting status to unstructured: %w", err)
	}
	obj.Object["status"] = m
	return obj, nil
}

// setStatusFields sets only the named top-level fields of obj's .status from
// the typed status (removing those the typed encoding omits), leaving the
// other status fields exactly as they were.
func setStatusFields(obj *unstructured.Unstructured, status interface{}, fields ...string) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	if err != nil {
		return nil, fmt.Errorf("converting status to unstructured: %w", err)
	}
	cur, ok := obj.Object["status"].(map[string]interface{})
	if !ok {
		cur = map[string]interface{}{}
	}
	for _, f := range fields {
		if v, ok := m[f]; ok {
			cur[f] = v
		} else {
			delete(cur, f)
		}
	}
	obj.Object["status"] = cur
	return obj, nil
}

// rawJSON encodes v as a RawExtension.
func rawJSON(v interface{}) (*runtime.RawExtension, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding status: %w", err)
	}
	return &runtime.RawExtension{Raw: b}, nil
}

// resourceTemplateGeneration reads the template generation a member object
// was built from; absent means 0.
func resourceTemplateGeneration(obj *unstructured.Unstructured) (int64, error) {
	v, ok := obj.GetAnnotations()[workv1alpha2.ResourceTemplateGenerationAnnotationKey]
	if !ok || v == "" {
		return 0, nil
	}
	g, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing annotation %s of %s/%s: %w", workv1alpha2.ResourceTemplateGenerationAnnotationKey, obj.GetNamespace(), obj.GetName(), err)
	}
	return g, nil
}
