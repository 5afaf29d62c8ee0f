package execution

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/telemetry"
)

// memberObjects is how the sub-reconcilers reach the objects of one
// member: plain functions, over the member's client in the controller
// (newMemberObjects), over maps in tests. Every write carries the
// controller's field manager.
type memberObjects struct {
	// resource maps obj's kind to its resource in the member and sets obj's
	// namespace as the member keeps it: "default" for a namespaced object
	// without one, as with kubectl, none for a cluster-scoped object.
	resource func(obj *unstructured.Unstructured) (schema.GroupVersionResource, error)
	// observe reads the member object of obj from the member informer,
	// which holds the objects Flotilla applied, and those taken over
	// untouched; when they lack it and probe is set, from the member (its
	// watch cache), as when the informer has not listed the member yet.
	// nil when it is not found.
	observe func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, probe bool) (*unstructured.Unstructured, error)
	// get reads the member object of obj live; nil when it does not exist.
	get func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// create and update write obj and return the stored object.
	create func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	update func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// apply writes obj by server-side apply, with Flotilla's apply field
	// manager taking the fields obj sets, and returns the stored object.
	apply func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// patch merge-patches the member object obj.
	patch func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, data []byte) error
	// delete deletes the member object obj, provided it still has obj's
	// UID, and its dependents in the background.
	delete func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error
	// watch watches obj, an object taken over untouched for the Work with
	// key work, which its changes enqueue (untouched.go); unwatch stops
	// that once it is written. Either may be nil (no watching).
	watch   func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, work string) error
	unwatch func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured)
}

// newMemberObjects reaches the objects of member m through client, and
// reads them from the hub's informers, whose first list is waited for up
// to syncTimeout.
func (c *Controller) newMemberObjects(m *memberState, client *member.Client, syncTimeout time.Duration) memberObjects {
	ri := func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) dynamic.ResourceInterface {
		// An empty namespace is a cluster-scoped object (resource set it).
		return client.Dynamic.Resource(gvr).Namespace(obj.GetNamespace())
	}
	get := func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return getObject(ctx, ri(gvr, obj), obj.GetName(), metav1.GetOptions{})
	}
	// The probe for an object someone else made is answered by the
	// member's watch cache (resourceVersion 0), not by a quorum read of
	// its etcd: one per member object Flotilla creates. A probe behind the
	// member is no harm: a create that then finds the object there reads
	// it live (get), and an update of an object gone meanwhile fails and
	// is retried.
	probeObject := func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return getObject(ctx, ri(gvr, obj), obj.GetName(), metav1.GetOptions{ResourceVersion: "0"})
	}
	return memberObjects{
		resource: func(obj *unstructured.Unstructured) (schema.GroupVersionResource, error) {
			mapping, err := restMapping(client.Mapper, obj.GroupVersionKind())
			if err != nil {
				return schema.GroupVersionResource{}, err
			}
			setMemberNamespace(mapping, obj)
			return mapping.Resource, nil
		},
		// Only objects labelled with a Work permanent id are read from the
		// informer: an object someone else made is found by the probe, or
		// by the create the apply reconciler tries first without one.
		observe: func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, probe bool) (*unstructured.Unstructured, error) {
			inf, ok := c.memberInformer(m.name, gvr)
			synced := ok && waitSynced(ctx, inf, syncTimeout)
			if synced {
				if cached, exists, err := inf.GetIndexer().GetByKey(cache.MetaObjectToName(obj).String()); err == nil && exists && applied(cached) {
					if u, ok := member.Unstructured(cached); ok {
						return u, nil
					}
				}
			}
			if u, ok := c.untouchedObject(m.name, gvr, obj); ok {
				return u, nil
			}
			if !probe && synced {
				return nil, nil
			}
			return probeObject(ctx, gvr, obj)
		},
		get: get,
		create: func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return ri(gvr, obj).Create(ctx, obj, metav1.CreateOptions{FieldManager: ControllerName})
		},
		update: func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return ri(gvr, obj).Update(ctx, obj, metav1.UpdateOptions{FieldManager: ControllerName})
		},
		apply: func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return ri(gvr, obj).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: flotillav1alpha1.ApplyFieldManager, Force: true})
		},
		patch: func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, data []byte) error {
			_, err := ri(gvr, obj).Patch(ctx, obj.GetName(), types.MergePatchType, data, metav1.PatchOptions{FieldManager: ControllerName})
			return err
		},
		delete: func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
			uid := obj.GetUID()
			return ri(gvr, obj).Delete(ctx, obj.GetName(), metav1.DeleteOptions{
				Preconditions: &metav1.Preconditions{UID: &uid},
				// Background, also for kinds whose default is to orphan their
				// dependents (Jobs and their pods).
				PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
			})
		},
		watch: func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, work string) error {
			return c.watchUntouched(m.name, gvr, obj, work)
		},
		unwatch: func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
			c.unwatchUntouched(m.name, gvr, obj)
		},
	}
}

// countWrites counts the creates, updates and deletes of o in cluster's
// member in Karmada's metrics (create_resource_to_cluster ...). Only the
// writes are counted: a manifest already applied reaches none of them.
func countWrites(cluster string, o memberObjects) memberObjects {
	create, update, apply, del := o.create, o.update, o.apply, o.delete
	o.create = func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		out, err := create(ctx, gvr, obj)
		// A create refused because the object is there is the apply's
		// probe (the object is then read and updated, or refused as
		// someone else's), not a failed create.
		if !apierrors.IsAlreadyExists(err) {
			telemetry.CountCreateResource(err, obj.GetAPIVersion(), obj.GetKind(), cluster)
		}
		return out, err
	}
	o.update = func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		out, err := update(ctx, gvr, obj)
		// Karmada's operationResult of a write that changed the object.
		telemetry.CountUpdateResource(err, obj.GetAPIVersion(), obj.GetKind(), cluster, "updated")
		return out, err
	}
	if apply != nil {
		o.apply = func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			out, err := apply(ctx, gvr, obj)
			telemetry.CountUpdateResource(err, obj.GetAPIVersion(), obj.GetKind(), cluster, "updated")
			return out, err
		}
	}
	o.delete = func(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
		err := del(ctx, gvr, obj)
		telemetry.CountDeleteResource(err, obj.GetAPIVersion(), obj.GetKind(), cluster)
		return err
	}
	return o
}

// getObject reads a member object, nil when it does not exist.
func getObject(ctx context.Context, ri dynamic.ResourceInterface, name string, opts metav1.GetOptions) (*unstructured.Unstructured, error) {
	obj, err := ri.Get(ctx, name, opts)
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

// setMemberNamespace sets the namespace of obj as the member keeps it: a
// namespaced object without a namespace goes to "default", as with
// kubectl; the namespace of a cluster-scoped object is ignored.
func setMemberNamespace(mapping *meta.RESTMapping, obj *unstructured.Unstructured) {
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		obj.SetNamespace("")
		return
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(metav1.NamespaceDefault)
	}
}
