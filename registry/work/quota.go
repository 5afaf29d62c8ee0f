package work

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/placement"
	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// QuotaLister lists the FederatedResourceQuotas of a namespace.
type QuotaLister func(ctx context.Context, namespace string) ([]policyv1alpha1.FederatedResourceQuota, error)

// NewQuotaLister reads the quotas from storage, the federatedresourcequotas
// storage of policy.karmada.io.
func NewQuotaLister(storage rest.Storage) (QuotaLister, error) {
	l, ok := storage.(rest.Lister)
	if !ok {
		return nil, fmt.Errorf("the federatedresourcequotas storage %T cannot list", storage)
	}
	return func(ctx context.Context, namespace string) ([]policyv1alpha1.FederatedResourceQuota, error) {
		// From the watch cache as it is: asked at every scheduling result
		// written, it must cost no etcd round trip; a quota created a
		// moment ago may be missed once.
		obj, err := l.List(genericapirequest.WithNamespace(ctx, namespace), &metainternalversion.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		list, ok := obj.(*policyv1alpha1.FederatedResourceQuotaList)
		if !ok {
			return nil, fmt.Errorf("listing federatedresourcequotas returned %T", obj)
		}
		return list.Items, nil
	}, nil
}

// quotaCheck is the control plane's enforcement of FederatedResourceQuota
// overall limits on ResourceBindings (Karmada's FederatedQuotaEnforcement,
// which Karmada does in its resourcebinding validating webhook): a write
// that raises the binding's use of a resource a quota of its namespace
// names (new or larger spec.clusters, higher replica requirements) beyond
// that quota's overall, counting what the namespace's other bindings use,
// is refused with a 403 of reason QuotaExceeded. Use is
// placement.BindingUsage, the same the scheduler and the quota's
// status.overallUsed count.
type quotaCheck struct {
	quotas QuotaLister
	// bindings lists the ResourceBindings of a namespace as stored.
	bindings func(ctx context.Context, namespace string) ([]workv1alpha2.ResourceBinding, error)
	// lock, when set, is called before the bindings are listed, only for
	// a write that raises use in a namespace with quotas; it serializes
	// such writes (the caller releases it once the write is done).
	lock func(ctx context.Context, namespace string) error
}

// NamespaceLock takes a lock of namespace that every replica of the server
// shares (an etcd lock), returning its release: with it, quota-raising
// binding writes are serialized across replicas, not only within one.
type NamespaceLock func(ctx context.Context, namespace string) (release func(), err error)

// validate checks the write of rb over old (nil on create).
func (c *quotaCheck) validate(ctx context.Context, rb, old *workv1alpha2.ResourceBinding) error {
	requested := placement.BindingUsage(&rb.Spec, rb.Spec.Clusters)
	var was corev1.ResourceList
	if old != nil {
		was = placement.BindingUsage(&old.Spec, old.Spec.Clusters)
	}
	if !raises(requested, was) {
		return nil
	}
	quotas, err := c.quotas(ctx, rb.Namespace)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("listing the FederatedResourceQuotas of namespace %s: %w", rb.Namespace, err))
	}
	if len(quotas) == 0 {
		return nil
	}
	if c.lock != nil {
		if err := c.lock(ctx, rb.Namespace); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("taking the FederatedResourceQuota lock of namespace %s: %w", rb.Namespace, err))
		}
	}
	bindings, err := c.bindings(ctx, rb.Namespace)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("listing the ResourceBindings of namespace %s: %w", rb.Namespace, err))
	}
	used := make([]corev1.ResourceList, 0, len(bindings))
	for i := range bindings {
		if b := &bindings[i]; b.Name != rb.Name {
			used = append(used, placement.BindingUsage(&b.Spec, b.Spec.Clusters))
		}
	}
	others := placement.Add(used...)
	for _, q := range quotas {
		if msg, exceeded := placement.OverallExceeded(q.Namespace, q.Name, q.Spec.Overall, others, was, requested); exceeded {
			return placement.NewQuotaRefusal(rb.Name, msg)
		}
	}
	return nil
}

// raises tells whether requested uses more of some resource than was.
func raises(requested, was corev1.ResourceList) bool {
	for name, q := range requested {
		if q.Cmp(was[name]) > 0 {
			return true
		}
	}
	return false
}

// quotaGuard runs quotaCheck on every create and update of
// ResourceBindings (patches and apply included) after the other
// validation, for each storage that can change their spec: the binding
// itself and its scheduling subresource. The writes that raise use in a
// namespace with quotas are serialized, from their check to the end of
// their write, whichever storage they go through, so two of them cannot
// both pass on the same headroom: each lists the bindings as stored (a
// consistent list) after the previous one's write completed. Other writes
// (most: status, metadata, unscheduled bindings, namespaces without
// quotas) take no lock and list nothing. Status-only writes (the status
// subresource) change no use and are not checked. With several replicas
// the namespace's shared lock is taken too (after this replica's own, so
// one write per replica at a time asks for it), and the list, a
// consistent read from etcd, sees every write another replica completed
// under it.
type quotaGuard struct {
	quotas QuotaLister
	// lister lists the stored bindings; the ResourceBinding storage.
	lister rest.Lister
	locks  [64]sync.Mutex
	// shared, when set, is the lock the replicas share.
	shared NamespaceLock
}

// newQuotaGuard guards the writes to the bindings of lister with the
// quotas of quotas; shared (nil for one replica) serializes them across
// replicas.
func newQuotaGuard(lister rest.Lister, quotas QuotaLister, shared NamespaceLock) *quotaGuard {
	return &quotaGuard{lister: lister, quotas: quotas, shared: shared}
}

func (g *quotaGuard) list(ctx context.Context, namespace string) ([]workv1alpha2.ResourceBinding, error) {
	obj, err := g.lister.List(genericapirequest.WithNamespace(ctx, namespace), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*workv1alpha2.ResourceBindingList)
	if !ok {
		return nil, fmt.Errorf("listing resourcebindings returned %T", obj)
	}
	return list.Items, nil
}

// check returns the check of one write, and the release of the lock its
// validation may take (to call once the write is done). An update's
// validation may run more than once (conflicts are retried): the lock is
// taken once.
func (g *quotaGuard) check() (*quotaCheck, func()) {
	var (
		held          *sync.Mutex
		releaseShared func()
	)
	c := &quotaCheck{quotas: g.quotas, bindings: g.list, lock: func(ctx context.Context, namespace string) error {
		if held != nil {
			return nil
		}
		h := fnv.New32a()
		_, _ = h.Write([]byte(namespace))
		held = &g.locks[h.Sum32()%uint32(len(g.locks))]
		held.Lock()
		if g.shared == nil {
			return nil
		}
		release, err := g.shared(ctx, namespace)
		if err != nil {
			return err
		}
		releaseShared = release
		return nil
	}}
	return c, func() {
		if releaseShared != nil {
			releaseShared()
		}
		if held != nil {
			held.Unlock()
		}
	}
}

// create is next, the storage's Create, with the check.
func (g *quotaGuard) create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions,
	next func(context.Context, runtime.Object, rest.ValidateObjectFunc, *metav1.CreateOptions) (runtime.Object, error)) (runtime.Object, error) {
	check, release := g.check()
	defer release()
	return next(ctx, obj, func(ctx context.Context, obj runtime.Object) error {
		if createValidation != nil {
			if err := createValidation(ctx, obj); err != nil {
				return err
			}
		}
		rb, ok := obj.(*workv1alpha2.ResourceBinding)
		if !ok {
			return nil
		}
		return check.validate(ctx, rb, nil)
	}, options)
}

// updater is a storage's Update.
type updater func(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error)

// update is next, the storage's Update, with the check.
func (g *quotaGuard) update(next updater) updater {
	return func(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
		updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
		check, release := g.check()
		defer release()
		guarded := func(ctx context.Context, obj, old runtime.Object) error {
			if updateValidation != nil {
				if err := updateValidation(ctx, obj, old); err != nil {
					return err
				}
			}
			rb, ok1 := obj.(*workv1alpha2.ResourceBinding)
			prev, ok2 := old.(*workv1alpha2.ResourceBinding)
			if !ok1 || !ok2 {
				return nil
			}
			return check.validate(ctx, rb, prev)
		}
		return next(ctx, name, objInfo, createValidation, guarded, forceAllowCreate, options)
	}
}

// quotaGuardedREST is the ResourceBinding storage with its guard.
type quotaGuardedREST struct {
	*resource.REST
	guard *quotaGuard
}

var (
	_ rest.Creater = &quotaGuardedREST{}
	_ rest.Updater = &quotaGuardedREST{}
	_ rest.Updater = &quotaGuardedScheduling{}
)

// Create implements rest.Creater.
func (g *quotaGuardedREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return g.guard.create(ctx, obj, createValidation, options, g.REST.Create)
}

// Update implements rest.Updater.
func (g *quotaGuardedREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return g.guard.update(g.REST.Update)(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// quotaGuardedScheduling is the ResourceBindings' scheduling subresource
// with the guard of their storage: a decision that raises use is checked
// like any other write.
type quotaGuardedScheduling struct {
	*resource.StatusREST
	guard *quotaGuard
}

// Update implements rest.Updater.
func (g *quotaGuardedScheduling) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return g.guard.update(g.StatusREST.Update)(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}
