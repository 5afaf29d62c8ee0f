package cache

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

// listPageSize is the page size of a member list: the cache never holds a
// whole member list decoded, only one page at a time.
const listPageSize = 500

// Indexer is told about every change of a cached object (the full-text
// index). It must not keep obj.
type Indexer interface {
	Put(s *Store, key string, obj map[string]any)
	Delete(s *Store, key string)
	// DeleteStore drops every object of a store that stopped.
	DeleteStore(s *Store)
}

// reflector keeps a Store in step with the member: a paged list, then a
// watch from the list's resourceVersion, listing again when the watch
// expires.
type reflector struct {
	store      *Store
	client     dynamic.ResourceInterface
	keepNS     func(namespace string) bool // nil: every namespace
	index      Indexer
	setErr     func(error)
	onListed   func()
	minBackoff time.Duration
}

func (r *reflector) run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("cluster", r.store.Cluster, "resource", r.store.Resource.String())
	backoff := wait.Backoff{Duration: r.minBackoff, Factor: 2, Jitter: 0.2, Steps: 8, Cap: 30 * time.Second}
	delay := time.Duration(0)
	for ctx.Err() == nil {
		rv, err := r.list(ctx)
		if err == nil {
			r.setErr(nil)
			if r.onListed != nil {
				r.onListed()
			}
			backoff = wait.Backoff{Duration: r.minBackoff, Factor: 2, Jitter: 0.2, Steps: 8, Cap: 30 * time.Second}
			err = r.watch(ctx, rv)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			logger.V(2).Info("Member list/watch failed", "err", err)
			r.setErr(err)
			delay = backoff.Step()
		} else {
			delay = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// list reads every object page by page and swaps them into the store.
func (r *reflector) list(ctx context.Context) (string, error) {
	items := map[string]entry{}
	var c *codec
	opts := metav1.ListOptions{Limit: listPageSize}
	var listRV string
	for {
		page, err := r.client.List(ctx, opts)
		if err != nil {
			if apierrors.IsResourceExpired(err) && opts.Continue != "" {
				// The snapshot expired mid-list: start again.
				items, c, opts, listRV = map[string]entry{}, nil, metav1.ListOptions{Limit: listPageSize}, ""
				continue
			}
			return "", err
		}
		if listRV == "" {
			listRV = page.GetResourceVersion()
		}
		type compacted struct {
			key string
			rv  uint64
		}
		raws := make([][]byte, 0, len(page.Items))
		objs := make([]compacted, 0, len(page.Items))
		for i := range page.Items {
			obj := &page.Items[i]
			if r.keepNS != nil && !r.keepNS(obj.GetNamespace()) {
				continue
			}
			raw, err := compactJSON(obj, searchv1alpha1.CachedFromClusterAnnotation, r.store.Cluster)
			if err != nil {
				return "", err
			}
			key := Key(obj.GetNamespace(), obj.GetName())
			if r.index != nil {
				r.index.Put(r.store, key, obj.Object)
			}
			raws = append(raws, raw)
			objs = append(objs, compacted{key: key, rv: parseRV(obj.GetResourceVersion())})
		}
		if c == nil {
			if c, err = r.codecFor(raws); err != nil {
				return "", err
			}
		}
		for i, raw := range raws {
			items[objs[i].key] = entry{rv: objs[i].rv, data: c.compress(raw)}
		}
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			break
		}
	}
	gone := r.store.replace(items, parseRV(listRV), c)
	if r.index != nil {
		for _, k := range gone {
			r.index.Delete(r.store, k)
		}
	}
	return listRV, nil
}

// codecFor returns the store's codec, trained on the first page of the
// store's first list.
func (r *reflector) codecFor(samples [][]byte) (*codec, error) {
	r.store.mu.RLock()
	c := r.store.codec
	r.store.mu.RUnlock()
	if c != nil {
		return c, nil
	}
	return newCodec(samples)
}

// watch applies the member's changes from rv until the watch ends; it
// returns nil when the store should list again.
func (r *reflector) watch(ctx context.Context, rv string) error {
	for ctx.Err() == nil {
		w, err := r.client.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(300 + time.Now().UnixNano()%300))})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				return nil
			}
			return err
		}
		next, err := r.consume(ctx, w)
		w.Stop()
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				return nil
			}
			return err
		}
		if next != "" {
			rv = next
		}
	}
	return nil
}

// consume applies the events of one watch; it returns the last
// resourceVersion seen.
func (r *reflector) consume(ctx context.Context, w watch.Interface) (string, error) {
	rv := ""
	for {
		select {
		case <-ctx.Done():
			return rv, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, nil
			}
			if ev.Type == watch.Error {
				return rv, apierrors.FromObject(ev.Object)
			}
			obj, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				return rv, fmt.Errorf("unexpected watch object %T", ev.Object)
			}
			rv = obj.GetResourceVersion()
			if ev.Type == watch.Bookmark {
				r.store.bookmark(parseRV(rv))
				continue
			}
			if r.keepNS != nil && !r.keepNS(obj.GetNamespace()) {
				r.store.bookmark(parseRV(rv))
				continue
			}
			key := Key(obj.GetNamespace(), obj.GetName())
			if ev.Type == watch.Deleted {
				if r.index != nil {
					r.index.Delete(r.store, key)
				}
				r.store.apply(watch.Deleted, key, parseRV(rv), nil)
				continue
			}
			raw, err := compactJSON(obj, searchv1alpha1.CachedFromClusterAnnotation, r.store.Cluster)
			if err != nil {
				return rv, err
			}
			if r.index != nil {
				r.index.Put(r.store, key, obj.Object)
			}
			r.store.apply(ev.Type, key, parseRV(rv), r.store.codec.compress(raw))
		}
	}
}

// parseRV reads a member resourceVersion. Kubernetes API servers backed by
// etcd use the store revision, a decimal integer; anything else counts as 0.
func parseRV(rv string) uint64 {
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}

func ptr[T any](v T) *T { return &v }
