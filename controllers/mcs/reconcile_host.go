package mcs

import (
	"context"
	"errors"
	"fmt"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
)

// hostSliceReconciler keeps the control plane's copies (plan.HostSlice) of
// the EndpointSlices one member exports for a service, in the host API
// server, beside the collected Works.
type hostSliceReconciler struct {
	// stored lists the host's copies of the slices of service
	// namespace/name collected from cluster (a cache holding only copies:
	// nothing else is ever written or deleted).
	stored func(cluster, namespace, name string) ([]*discoveryv1.EndpointSlice, error)
	create func(ctx context.Context, s *discoveryv1.EndpointSlice) error
	patch  func(ctx context.Context, namespace, name string, patch []byte) error
	delete func(ctx context.Context, s *discoveryv1.EndpointSlice) error
}

// reconcile makes the host's copies of cluster's slices of service
// namespace/name desired, writing only what differs. A create that finds
// the name taken (the cache is behind: its event queues the service again;
// or a slice that is not a copy: left alone) or the namespace missing on
// the host (a ServiceExport made in the member, for a namespace the control
// plane does not have: nothing to show it in) writes nothing.
func (r *hostSliceReconciler) reconcile(ctx context.Context, cluster, namespace, name string, desired []*discoveryv1.EndpointSlice) error {
	stored, err := r.stored(cluster, namespace, name)
	if err != nil {
		return err
	}
	c := plan.ReconcileHost(desired, stored)
	log := klog.FromContext(ctx)
	var errs []error
	for _, s := range c.Create {
		err := r.create(ctx, s)
		switch {
		case apierrors.IsAlreadyExists(err):
			log.V(2).Info("Host EndpointSlice exists already", "endpointSlice", klog.KObj(s))
		case apierrors.IsNotFound(err):
			log.V(2).Info("No namespace on the host for the EndpointSlice", "endpointSlice", klog.KObj(s))
		case err != nil:
			errs = append(errs, fmt.Errorf("creating host EndpointSlice %s/%s: %w", s.Namespace, s.Name, err))
		default:
			log.V(2).Info("Created host EndpointSlice", "endpointSlice", klog.KObj(s))
		}
	}
	for _, u := range c.Update {
		p, err := plan.HostPatch(u.Desired)
		if err == nil {
			err = r.patch(ctx, u.Stored.Namespace, u.Stored.Name, p)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("updating host EndpointSlice %s/%s: %w", u.Stored.Namespace, u.Stored.Name, err))
			continue
		}
		log.V(4).Info("Updated host EndpointSlice", "endpointSlice", klog.KObj(u.Stored))
	}
	for _, s := range c.Delete {
		err := r.delete(ctx, s)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting host EndpointSlice %s/%s: %w", s.Namespace, s.Name, err))
		default:
			log.V(2).Info("Deleted host EndpointSlice", "endpointSlice", klog.KObj(s))
		}
	}
	return errors.Join(errs...)
}

// hostSlicesByService indexes the host's copies by
// "<cluster>/<namespace>/<service>".
const hostSlicesByService = "mcs-host-service"

func hostSliceKey(obj any) ([]string, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	cluster, service, ok := plan.HostSliceOf(s)
	if !ok {
		return nil, nil
	}
	return []string{cluster + "/" + s.Namespace + "/" + service}, nil
}

// writtenTTL is how long a copy written is read as written rather than
// as the informer last saw it, when the informer is behind.
const writtenTTL = time.Minute

// newHostSliceReconciler reads the copies from idx (an informer of the
// host's EndpointSlices selected by plan.HostSliceSelector, indexed by
// hostSlicesByService) and writes them with host. The copies it patches
// are read back as written until the informer has them: the next pass,
// queued by another event of the same change, writes nothing again.
// Creations and deletions are not remembered (client-go's mutation cache
// keeps no deletions; creations are left out with them): a pass before
// the informer has one may write once more, and finds it done.
func newHostSliceReconciler(idx cache.Indexer, host kubernetes.Interface) hostSliceReconciler {
	written := cache.NewIntegerResourceVersionMutationCache(klog.Background(), idx, idx, writtenTTL, false)
	return hostSliceReconciler{
		stored: func(cluster, namespace, name string) ([]*discoveryv1.EndpointSlice, error) {
			objs, err := written.ByIndex(hostSlicesByService, cluster+"/"+namespace+"/"+name)
			if err != nil {
				return nil, err
			}
			out := make([]*discoveryv1.EndpointSlice, 0, len(objs))
			for _, o := range objs {
				if s, ok := o.(*discoveryv1.EndpointSlice); ok {
					out = append(out, s)
				}
			}
			return out, nil
		},
		create: func(ctx context.Context, s *discoveryv1.EndpointSlice) error {
			_, err := host.DiscoveryV1().EndpointSlices(s.Namespace).Create(ctx, s, metav1.CreateOptions{FieldManager: FieldManager})
			return err
		},
		patch: func(ctx context.Context, namespace, name string, patch []byte) error {
			s, err := host.DiscoveryV1().EndpointSlices(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
			if err == nil {
				written.Mutation(s)
			}
			return err
		},
		delete: func(ctx context.Context, s *discoveryv1.EndpointSlice) error {
			return host.DiscoveryV1().EndpointSlices(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		},
	}
}
