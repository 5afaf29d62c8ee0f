package inprocess

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// overHTTP is the HTTP client of a kind: server-side apply goes there.
type overHTTP[T, A any] interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
	Apply(ctx context.Context, cfg A, opts metav1.ApplyOptions) (T, error)
}

// statusOverHTTP is the HTTP client of a kind with a status subresource.
type statusOverHTTP[T, A any] interface {
	ApplyStatus(ctx context.Context, cfg A, opts metav1.ApplyOptions) (T, error)
}

// typed is the generated typed client's interface of one kind (T, its
// list L, its apply configuration A) over the in-process storage.
type typed[T, L runtime.Object, A any] struct {
	s         *Storage
	gvr       schema.GroupVersionResource
	namespace string
	// shared hands out the watch cache's objects as they are (List and
	// Watch of informers).
	shared bool
	http   overHTTP[T, A]
	newT   func() T
	newL   func() L
}

func newTyped[T, L runtime.Object, A any](c *Clientset, gvr schema.GroupVersionResource, namespace string, http overHTTP[T, A], newT func() T, newL func() L) *typed[T, L, A] {
	return &typed[T, L, A]{s: c.storage, gvr: gvr, namespace: namespace, shared: c.shared, http: http, newT: newT, newL: newL}
}

// object returns out as T; on an error an empty T, as the HTTP client
// returns.
func object[T runtime.Object](out runtime.Object, err error, empty func() T) (T, error) {
	if err != nil {
		return empty(), err
	}
	return out.(T), nil
}

func (c *typed[T, L, A]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out, err := c.s.Create(ctx, c.gvr, c.namespace, obj, opts)
	return object(out, err, c.newT)
}

func (c *typed[T, L, A]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out, err := c.s.Update(ctx, c.gvr, c.namespace, obj, opts)
	return object(out, err, c.newT)
}

func (c *typed[T, L, A]) UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out, err := c.s.Update(ctx, c.gvr, c.namespace, obj, opts, "status")
	return object(out, err, c.newT)
}

func (c *typed[T, L, A]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.s.Delete(ctx, c.gvr, c.namespace, name, opts)
}

func (c *typed[T, L, A]) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	return c.s.DeleteCollection(ctx, c.gvr, c.namespace, opts, listOpts)
}

func (c *typed[T, L, A]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out, err := c.s.Get(ctx, c.gvr, c.namespace, name, opts)
	return object(out, err, c.newT)
}

func (c *typed[T, L, A]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out, err := c.s.List(ctx, c.gvr, c.namespace, opts, c.shared)
	return object(out, err, c.newL)
}

func (c *typed[T, L, A]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return c.s.Watch(ctx, c.gvr, c.namespace, opts, c.shared)
}

// Patch patches in process; a server-side apply patch goes over HTTP.
func (c *typed[T, L, A]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	switch pt {
	case types.ApplyYAMLPatchType, types.ApplyCBORPatchType:
		return c.http.Patch(ctx, name, pt, data, opts, subresources...)
	}
	out, err := c.s.Patch(ctx, c.gvr, c.namespace, name, pt, data, opts, subresources...)
	return object(out, err, c.newT)
}

// Apply is server-side apply: over HTTP, where the field manager is.
func (c *typed[T, L, A]) Apply(ctx context.Context, cfg A, opts metav1.ApplyOptions) (T, error) {
	return c.http.Apply(ctx, cfg, opts)
}

// ApplyStatus is server-side apply of the status: over HTTP.
func (c *typed[T, L, A]) ApplyStatus(ctx context.Context, cfg A, opts metav1.ApplyOptions) (T, error) {
	if h, ok := c.http.(statusOverHTTP[T, A]); ok {
		return h.ApplyStatus(ctx, cfg, opts)
	}
	return c.http.Apply(ctx, cfg, opts)
}
