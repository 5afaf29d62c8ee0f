package mcs

import (
	"context"
	"encoding/json"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	networkinginformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/networking/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha1"
	workv2informers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
)

// claimKeys are a policy's claim labels and annotations: a Service a
// MultiClusterService claims, and its binding, lose them.
var claimKeys = []string{
	policyv1alpha1.PropagationPolicyPermanentIDLabel, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel,
	policyv1alpha1.PropagationPolicyNamespaceAnnotation, policyv1alpha1.PropagationPolicyNameAnnotation,
	policyv1alpha1.ClusterPropagationPolicyAnnotation,
}

// ServiceController does what CrossCluster MultiClusterServices ask, as
// Karmada's multiclusterservice and endpointsliceDispatch controllers do:
// the Service propagated to the provider and consumer clusters through a
// binding of its own, the providers' endpoints (collected by the
// serviceExport controller) given to the consumers. Its keys are
// "<namespace>/<name>" of the MultiClusterService (and its Service).
type ServiceController struct {
	queue     workqueue.TypedRateLimitingInterface[string]
	synced    []cache.InformerSynced
	reconcile serviceReconciler
}

// NewService returns the multiclusterservice controller. Services are
// the host's resource templates; events go to recorder.
func NewService(services networkinginformers.MultiClusterServiceInformer, works workinformers.WorkInformer,
	bindings workv2informers.ResourceBindingInformer, clusters clusterinformers.ClusterInformer, hostServices coreinformers.ServiceInformer,
	client versioned.Interface, host kubernetes.Interface, recorder record.EventRecorder) (*ServiceController, error) {
	if err := addWorkIndex(works.Informer()); err != nil {
		return nil, err
	}
	idx := works.Informer().GetIndexer()
	c := &ServiceController{queue: worker.NewQueue(MultiClusterServiceControllerName),
		synced: []cache.InformerSynced{services.Informer().HasSynced, works.Informer().HasSynced, bindings.Informer().HasSynced,
			clusters.Informer().HasSynced, hostServices.Informer().HasSynced}}
	mcsLister, rbLister, svcLister := services.Lister(), bindings.Lister(), hostServices.Lister()
	c.reconcile = serviceReconciler{
		mcs: func(namespace, name string) (*networkingv1alpha1.MultiClusterService, error) {
			return nilIfNotFound(mcsLister.MultiClusterServices(namespace).Get(name))
		},
		clusters: func() ([]*clusterv1alpha1.Cluster, error) { return clusters.Lister().List(labels.Everything()) },
		service: func(namespace, name string) (*corev1.Service, error) {
			return nilIfNotFound(svcLister.Services(namespace).Get(name))
		},
		binding: func(namespace, name string) (*workv1alpha2.ResourceBinding, error) {
			return nilIfNotFound(rbLister.ResourceBindings(namespace).Get(name))
		},
		works: serviceWorks(idx),
		work:  workByName(idx),
		write: newWorksWriter(client),
		claim: func(ctx context.Context, svc *corev1.Service, m *networkingv1alpha1.MultiClusterService) error {
			p, err := json.Marshal(claimPatch(m))
			if err != nil {
				return err
			}
			_, err = host.CoreV1().Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, p, metav1.PatchOptions{FieldManager: FieldManager})
			return err
		},
		bind: func(ctx context.Context, existing, desired *workv1alpha2.ResourceBinding) error {
			rbs := client.WorkV1alpha2().ResourceBindings(desired.Namespace)
			if existing == nil {
				_, err := rbs.Create(ctx, desired, metav1.CreateOptions{FieldManager: FieldManager})
				return err
			}
			p, err := bindingPatch(existing, desired)
			if err != nil {
				return err
			}
			_, err = rbs.Patch(ctx, existing.Name, types.MergePatchType, p, metav1.PatchOptions{FieldManager: FieldManager})
			return err
		},
		release: func(ctx context.Context, rb *workv1alpha2.ResourceBinding) error {
			p, err := json.Marshal(map[string]any{"metadata": map[string]any{
				"labels": map[string]any{workv1alpha2.BindingManagedByLabel: nil, networkingv1alpha1.MultiClusterServicePermanentIDLabel: nil},
				"annotations": map[string]any{networkingv1alpha1.MultiClusterServiceNameAnnotation: nil,
					networkingv1alpha1.MultiClusterServiceNamespaceAnnotation: nil},
			}})
			if err != nil {
				return err
			}
			_, err = client.WorkV1alpha2().ResourceBindings(rb.Namespace).Patch(ctx, rb.Name, types.MergePatchType, p, metav1.PatchOptions{FieldManager: FieldManager})
			return ignoreNotFound(err)
		},
		finalize: func(ctx context.Context, m *networkingv1alpha1.MultiClusterService, add bool) error {
			var fs []string
			for _, f := range m.Finalizers {
				if f != networkingv1alpha1.MultiClusterServiceControllerFinalizer {
					fs = append(fs, f)
				}
			}
			if add {
				fs = append(fs, networkingv1alpha1.MultiClusterServiceControllerFinalizer)
			}
			p, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": fs, "resourceVersion": m.ResourceVersion}})
			if err != nil {
				return err
			}
			_, err = client.NetworkingV1alpha1().MultiClusterServices(m.Namespace).Patch(ctx, m.Name, types.MergePatchType, p, metav1.PatchOptions{FieldManager: FieldManager})
			return ignoreNotFound(err)
		},
		status: func(ctx context.Context, m *networkingv1alpha1.MultiClusterService, conditions []metav1.Condition) error {
			p, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": m.ResourceVersion},
				"status": map[string]any{"conditions": conditions}})
			if err != nil {
				return err
			}
			_, err = client.NetworkingV1alpha1().MultiClusterServices(m.Namespace).Patch(ctx, m.Name, types.MergePatchType, p,
				metav1.PatchOptions{FieldManager: FieldManager}, "status")
			return ignoreNotFound(err)
		},
		event: func(m *networkingv1alpha1.MultiClusterService, eventType, reason, message string) {
			recorder.Event(&corev1.ObjectReference{APIVersion: networkingv1alpha1.SchemeGroupVersion.String(),
				Kind: networkingv1alpha1.MultiClusterServiceKind, Namespace: m.Namespace, Name: m.Name, UID: m.UID,
				ResourceVersion: m.ResourceVersion}, eventType, reason, message)
		},
	}
	enqueue := func(namespace, name string) { c.queue.Add(namespace + "/" + name) }
	if _, err := services.Informer().AddEventHandler(mcsHandler(func(m *networkingv1alpha1.MultiClusterService) {
		enqueue(m.Namespace, m.Name)
	})); err != nil {
		return nil, err
	}
	if _, err := works.Informer().AddEventHandler(workHandler(func(obj any) {
		if w, ok := work(obj); ok && plan.ManagedBy(w, networkingv1alpha1.ManagedByMultiClusterService) {
			if key := serviceKeyOf(w); key != "" {
				c.queue.Add(key)
			}
		}
	})); err != nil {
		return nil, err
	}
	everyMCS := func(string) {
		ms, _ := mcsLister.List(labels.Everything())
		for _, m := range ms {
			enqueue(m.Namespace, m.Name)
		}
	}
	if _, err := clusters.Informer().AddEventHandler(clusterHandler(endpointSliceAPI, everyMCS)); err != nil {
		return nil, err
	}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { everyMCS("") },
	}); err != nil {
		return nil, err
	}
	// The Service (created late, changed, claimed by someone else) and its
	// binding (changed by someone else): the MultiClusterService of the
	// same name looks again.
	onNamed := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		var ns, name string
		switch o := obj.(type) { // a Service or a binding
		case *corev1.Service:
			ns, name = o.Namespace, o.Name
		case *workv1alpha2.ResourceBinding:
			if o.Spec.Resource.Kind != plan.ServiceKind || o.Spec.Resource.APIVersion != "v1" {
				return
			}
			ns, name = o.Namespace, o.Spec.Resource.Name
		default:
			return
		}
		if _, err := mcsLister.MultiClusterServices(ns).Get(name); err == nil {
			enqueue(ns, name)
		}
	}
	named := cache.ResourceEventHandlerFuncs{AddFunc: onNamed, UpdateFunc: func(_, cur any) { onNamed(cur) }, DeleteFunc: onNamed}
	for _, inf := range []cache.SharedIndexInformer{hostServices.Informer(), bindings.Informer()} {
		if _, err := inf.AddEventHandler(named); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Run reconciles until ctx ends.
func (c *ServiceController) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, func(ctx context.Context, key string) error {
		namespace, name, ok := strings.Cut(key, "/")
		if !ok {
			return nil
		}
		ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("multiClusterService", key))
		return c.reconcile.reconcile(ctx, namespace, name)
	})
}

// claimPatch is the merge patch making m (nil: no one) the owner of a
// Service template: the detector leaves a claimed template alone, and a
// policy's claim goes.
func claimPatch(m *networkingv1alpha1.MultiClusterService) map[string]any {
	lbls := map[string]any{workv1alpha2.ResourceTemplateClaimedByLabel: nil, networkingv1alpha1.MultiClusterServicePermanentIDLabel: nil}
	annos := map[string]any{networkingv1alpha1.MultiClusterServiceNameAnnotation: nil, networkingv1alpha1.MultiClusterServiceNamespaceAnnotation: nil}
	if m != nil {
		lbls[workv1alpha2.ResourceTemplateClaimedByLabel] = networkingv1alpha1.MultiClusterServiceKind
		lbls[networkingv1alpha1.MultiClusterServicePermanentIDLabel] = m.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel]
		annos[networkingv1alpha1.MultiClusterServiceNameAnnotation] = m.Name
		annos[networkingv1alpha1.MultiClusterServiceNamespaceAnnotation] = m.Namespace
		for _, k := range claimKeys {
			lbls[k] = nil
			annos[k] = nil
		}
	}
	return map[string]any{"metadata": map[string]any{"labels": lbls, "annotations": annos}}
}

// bindingPatch is the merge patch turning existing into desired in the
// parts a MultiClusterService writes: its labels and annotations (a
// policy's claim removed), the resource, the placement (replaced whole),
// the conflict resolution and the scheduler.
func bindingPatch(existing, desired *workv1alpha2.ResourceBinding) ([]byte, error) {
	want := existing.DeepCopy()
	if want.Labels == nil {
		want.Labels = map[string]string{}
	}
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	for _, k := range claimKeys {
		delete(want.Labels, k)
		delete(want.Annotations, k)
	}
	for k, v := range desired.Labels {
		want.Labels[k] = v
	}
	for k, v := range desired.Annotations {
		want.Annotations[k] = v
	}
	want.Spec.Resource = desired.Spec.Resource
	want.Spec.Placement = desired.Spec.Placement.DeepCopy()
	want.Spec.ConflictResolution = desired.Spec.ConflictResolution
	want.Spec.SchedulerName = desired.Spec.SchedulerName
	from, err := json.Marshal(existing)
	if err != nil {
		return nil, err
	}
	to, err := json.Marshal(want)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(from, to)
}

func nilIfNotFound[T any](obj *T, err error) (*T, error) {
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
