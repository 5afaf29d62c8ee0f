package execution

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/interpreter"
	"github.com/flotilla-io/flotilla/member"
)

// outcome is what applying one manifest came to.
type outcome struct {
	ordinal int
	// desired is the manifest; nil when it cannot be read.
	desired *unstructured.Unstructured
	// resource is the manifest's resource (plural) in the member.
	resource string
	// observed is the member object after the apply, when it exists and
	// Flotilla may manage it.
	observed *unstructured.Unstructured
	// wrote says the member object was created or updated.
	wrote bool
	err   error
}

// apply applies every manifest of work to the member.
func (c *Controller) apply(ctx context.Context, m *memberState, client *member.Client, cluster string, work *workv1alpha1.Work) []outcome {
	manifests := work.Spec.Workload.Manifests
	out := make([]outcome, len(manifests))
	for i := range manifests {
		out[i] = c.applyManifest(ctx, m, client, cluster, work, i)
	}
	m.records.trim(work.UID, len(manifests))
	return out
}

// applyManifest creates the manifest's object in the member if it is
// absent, and otherwise updates it unless it already holds the manifest.
// It never writes over an object Flotilla does not manage unless the
// manifest asks for it (checkConflict).
func (c *Controller) applyManifest(ctx context.Context, m *memberState, client *member.Client, cluster string, work *workv1alpha1.Work, ordinal int) outcome {
	o := outcome{ordinal: ordinal}
	raw := work.Spec.Workload.Manifests[ordinal].Raw
	desired, err := decodeManifest(raw)
	if err != nil {
		o.err = fmt.Errorf("manifest %d: %w", ordinal, err)
		return o
	}
	o.desired = desired
	mapping, err := restMapping(client.Mapper, desired.GroupVersionKind())
	if err != nil {
		o.err = err
		return o
	}
	o.resource = mapping.Resource.Resource
	ri := resourceInterface(client.Dynamic, mapping, desired)
	observed, err := c.observe(ctx, m, client, mapping.Resource, ri, desired)
	if err != nil {
		o.err = err
		return o
	}
	log := klog.FromContext(ctx).WithValues("resource", mapping.Resource.GroupResource(), "object", klog.KObj(desired))
	hash := manifestHash(raw)
	// Two rounds at most: the second after a create found the object
	// already there, or an update found the cache behind the member.
	for round := 0; ; round++ {
		retry := round == 0
		if observed == nil {
			created, err := ri.Create(ctx, desired, metav1.CreateOptions{FieldManager: ControllerName})
			if apierrors.IsAlreadyExists(err) && retry {
				// Made between the GET and the create.
				if observed, err = getObject(ctx, ri, desired.GetName()); err != nil {
					o.err = err
					return o
				}
				continue
			}
			if err != nil {
				o.err = err
				return o
			}
			log.V(2).Info("Created member object")
			m.records.set(work.UID, ordinal, hash, created.GetResourceVersion())
			o.observed, o.wrote = created, true
			return o
		}
		if err := checkConflict(desired, observed, cluster); err != nil {
			o.err = err
			return o
		}
		o.observed = observed
		if m.records.upToDate(work.UID, ordinal, hash, observed.GetResourceVersion()) {
			return o
		}
		want, err := c.retain(desired, observed)
		if err != nil {
			o.err = err
			return o
		}
		if adopting(observed) {
			markAdopted(want)
		}
		if isApplied(want, observed) {
			m.records.set(work.UID, ordinal, hash, observed.GetResourceVersion())
			return o
		}
		updated, err := ri.Update(ctx, want, metav1.UpdateOptions{FieldManager: ControllerName})
		if apierrors.IsConflict(err) && retry {
			if observed, err = getObject(ctx, ri, desired.GetName()); err != nil {
				o.err = err
				return o
			}
			continue
		}
		if err != nil {
			o.err = err
			return o
		}
		log.V(2).Info("Updated member object")
		m.records.set(work.UID, ordinal, hash, updated.GetResourceVersion())
		o.observed, o.wrote = updated, true
		return o
	}
}

// retain returns desired with the member-owned fields of observed: the
// metadata (retainMemberFields), then what the interpreter retains.
func (c *Controller) retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	want := desired.DeepCopy()
	retainMemberFields(want, observed)
	if !c.interp.HookEnabled(want.GroupVersionKind(), interpreter.Retain) {
		return want, nil
	}
	want, err := c.interp.Retain(want, observed)
	if err != nil {
		return nil, fmt.Errorf("retaining the fields of %s %s: %w", observed.GetKind(), klog.KObj(observed), err)
	}
	return want, nil
}

// observe reads the member object of desired: from the member informer on
// its resource once that has synced, otherwise, and whenever the informer
// does not hold it, with a GET. The informer holds only objects labelled
// with a Work permanent id, so an object someone else made is found by the
// GET, before any create: a create is no safe probe for it, as it may fail
// on something other than the name (a NodePort Service answers 422
// "provided port is already allocated", not AlreadyExists). nil: the
// object does not exist.
func (c *Controller) observe(ctx context.Context, m *memberState, client *member.Client, gvr schema.GroupVersionResource, ri dynamic.ResourceInterface, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var shared member.Shared
	if c.opts.Shared != nil {
		shared = c.opts.Shared()
	}
	inf, err := m.informer(client, shared, gvr, memberEventHandler(m))
	if err == nil && waitSynced(ctx, inf, c.opts.CacheSyncTimeout) {
		key := desired.GetName()
		if ns := desired.GetNamespace(); ns != "" {
			key = ns + "/" + key
		}
		if obj, exists, err := inf.GetIndexer().GetByKey(key); err == nil && exists {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				return u, nil
			}
		}
	}
	return getObject(ctx, ri, desired.GetName())
}

// getObject reads a member object, nil when it does not exist.
func getObject(ctx context.Context, ri dynamic.ResourceInterface, name string) (*unstructured.Unstructured, error) {
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// decodeManifest reads a manifest, which must be an object with apiVersion,
// kind and name.
func decodeManifest(raw []byte) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if obj.GetName() == "" {
		return nil, errors.New("the object has no name")
	}
	return obj, nil
}

// restMapping maps a kind to its resource in the member, discovering the
// member's APIs again once when the kind is unknown (a CRD installed since).
func restMapping(mapper meta.ResettableRESTMapper, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		mapper.Reset()
		mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("mapping %s to a resource of the member: %w", gvk, err)
	}
	return mapping, nil
}

// resourceInterface returns the client of obj's resource. A namespaced
// object without a namespace goes to "default", as with kubectl; the
// namespace of a cluster-scoped object is ignored.
func resourceInterface(dyn dynamic.Interface, mapping *meta.RESTMapping, obj *unstructured.Unstructured) dynamic.ResourceInterface {
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		obj.SetNamespace("")
		return dyn.Resource(mapping.Resource)
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(metav1.NamespaceDefault)
	}
	return dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
}
