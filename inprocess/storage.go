package inprocess

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
)

// Storage is flotilla-apiserver's storage as code in the process reaches
// it: the REST storage of each resource, by group, version and resource
// (subresources as "resource/subresource"), and what every request to it
// passes through.
type Storage struct {
	resources map[schema.GroupVersionResource]*resource
	admit     admission.Interface
	objects   admission.ObjectInterfaces
	scheme    *runtime.Scheme
	codecs    serializer.CodecFactory
	user      user.Info
}

// resource is one resource's storage.
type resource struct {
	gvr        schema.GroupVersionResource
	kind       schema.GroupVersionKind
	namespaced bool
	storage    rest.Storage
	// subresources are the storage of status, scheduling...
	subresources map[string]rest.Storage
	// types are the Go types of the objects of the resource ("") and of
	// each subresource, as their storage's New returns them.
	types map[string]reflect.Type
}

// Config is what a Storage is built from.
type Config struct {
	// Admission is the server's admission chain (nil: none).
	Admission admission.Interface
	Scheme    *runtime.Scheme
	Codecs    serializer.CodecFactory
	// User is who the requests are made as: LoopbackUser when nil.
	User user.Info
}

// LoopbackUser is the identity flotilla-apiserver's loopback token
// authenticates as (system:apiserver in system:masters, which its
// authorization allows everything); in-process requests carry it.
func LoopbackUser() user.Info {
	return &user.DefaultInfo{Name: user.APIServerUser, Groups: []string{user.SystemPrivilegedGroup}}
}

// New returns a storage without resources: Install adds each API group
// before the server serves.
func New(cfg Config) *Storage {
	s := &Storage{
		resources: map[schema.GroupVersionResource]*resource{},
		admit:     cfg.Admission,
		objects:   admission.NewObjectInterfacesFromScheme(cfg.Scheme),
		scheme:    cfg.Scheme,
		codecs:    cfg.Codecs,
		user:      cfg.User,
	}
	if s.user == nil {
		s.user = LoopbackUser()
	}
	return s
}

// Install adds the resources of an API group as the server installs it.
// It is not safe to call once requests are made.
func (s *Storage) Install(info *genericapiserver.APIGroupInfo) error {
	for _, gv := range info.PrioritizedVersions {
		storages := info.VersionedResourcesStorageMap[gv.Version]
		// Resources first, then their subresources.
		for name, st := range storages {
			if strings.Contains(name, "/") {
				continue
			}
			gvr := gv.WithResource(name)
			r, err := s.newResource(gvr, st)
			if err != nil {
				return err
			}
			if r != nil {
				s.resources[gvr] = r
			}
		}
		for name, st := range storages {
			res, sub, ok := strings.Cut(name, "/")
			if !ok {
				continue
			}
			if r := s.resources[gv.WithResource(res)]; r != nil {
				r.subresources[sub] = st
				r.types[sub] = reflect.TypeOf(st.New())
			}
		}
	}
	return nil
}

// newResource describes a resource whose storage stores objects (not
// search's or proxying's connecters): nil for others.
func (s *Storage) newResource(gvr schema.GroupVersionResource, st rest.Storage) (*resource, error) {
	if _, ok := st.(rest.Getter); !ok {
		return nil, nil
	}
	scoper, ok := st.(rest.Scoper)
	if !ok {
		return nil, nil
	}
	kinds, _, err := s.scheme.ObjectKinds(st.New())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvr, err)
	}
	kind := gvr.GroupVersion().WithKind(kinds[0].Kind)
	if gvk, ok := st.(rest.GroupVersionKindProvider); ok {
		kind = gvk.GroupVersionKind(gvr.GroupVersion())
	}
	return &resource{gvr: gvr, kind: kind, namespaced: scoper.NamespaceScoped(), storage: st, subresources: map[string]rest.Storage{},
		types: map[string]reflect.Type{"": reflect.TypeOf(st.New())}}, nil
}

// resource returns the storage of gvr and subresource, or an error as
// the server answers for a resource it does not serve.
func (s *Storage) resource(gvr schema.GroupVersionResource, subresource string) (*resource, rest.Storage, error) {
	r := s.resources[gvr]
	if r == nil {
		return nil, nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	if subresource == "" {
		return r, r.storage, nil
	}
	st := r.subresources[subresource]
	if st == nil {
		return nil, nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	return r, st, nil
}

// context is ctx as the server's handlers leave it for the storage: the
// request's namespace and user.
func (s *Storage) context(ctx context.Context, namespace string) context.Context {
	return request.WithNamespace(request.WithUser(ctx, s.user), namespace)
}

// attributes are admission's attributes of a request.
func (s *Storage) attributes(r *resource, sub string, obj, old runtime.Object, namespace, name string, op admission.Operation, opts runtime.Object, dryRun []string) admission.Attributes {
	return admission.NewAttributesRecord(obj, old, r.kind, namespace, name, r.gvr, sub, op, opts, len(dryRun) > 0, s.user)
}

// validateCreate and validateUpdate are validating admission of a create
// or update; nil without admission.
func (s *Storage) validateCreate(r *resource, sub, namespace, name string, opts *metav1.CreateOptions) rest.ValidateObjectFunc {
	if s.admit == nil {
		return rest.ValidateAllObjectFunc
	}
	return rest.AdmissionToValidateObjectFunc(s.admit, s.attributes(r, sub, nil, nil, namespace, name, admission.Create, opts, opts.DryRun), s.objects)
}

func (s *Storage) validateUpdate(r *resource, sub, namespace, name string, opts *metav1.UpdateOptions) rest.ValidateObjectUpdateFunc {
	if s.admit == nil {
		return rest.ValidateAllObjectUpdateFunc
	}
	return rest.AdmissionToValidateObjectUpdateFunc(s.admit, s.attributes(r, sub, nil, nil, namespace, name, admission.Update, opts, opts.DryRun), s.objects)
}

// mutate runs mutating admission of op on obj.
func (s *Storage) mutate(ctx context.Context, attrs admission.Attributes) error {
	m, ok := s.admit.(admission.MutationInterface)
	if !ok || !m.Handles(attrs.GetOperation()) {
		return nil
	}
	return m.Admit(ctx, attrs, s.objects)
}

// Create stores obj (a copy of it) as the HTTP handler of a POST does.
func (s *Storage) Create(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj runtime.Object, opts metav1.CreateOptions, subresource ...string) (out runtime.Object, err error) {
	sub := subresourceOf(subresource)
	defer func(done func(error)) { done(err) }(s.record("POST", gvr, sub, time.Now()))
	r, st, err := s.resource(gvr, sub)
	if err != nil {
		return nil, err
	}
	creater, ok := st.(rest.Creater)
	if !ok {
		return nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), "create")
	}
	obj, m, err := s.incoming(r, namespace, obj)
	if err != nil {
		return nil, err
	}
	rest.WipeObjectMetaSystemFields(m)
	ctx = s.context(ctx, m.GetNamespace())
	if err := s.mutate(ctx, s.attributes(r, sub, obj, nil, m.GetNamespace(), m.GetName(), admission.Create, &opts, opts.DryRun)); err != nil {
		return nil, s.status(err)
	}
	out, err = creater.Create(ctx, obj, s.validateCreate(r, sub, m.GetNamespace(), m.GetName(), &opts), &opts)
	return out, s.status(err)
}

// incoming is what the HTTP handlers do to a body before storing it: a copy
// of obj (the caller's stays untouched), defaulted, whose namespace must be
// the request's (filled in when empty).
func (s *Storage) incoming(r *resource, namespace string, obj runtime.Object) (runtime.Object, metav1.Object, error) {
	obj = obj.DeepCopyObject()
	s.scheme.Default(obj)
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(rest.ExpectedNamespaceForScope(namespace, r.namespaced), m); err != nil {
		return nil, nil, err
	}
	return obj, m, nil
}

// Update replaces the stored object (or its subresource) with a copy of
// obj, as the HTTP handler of a PUT does.
func (s *Storage) Update(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj runtime.Object, opts metav1.UpdateOptions, subresource ...string) (out runtime.Object, err error) {
	sub := subresourceOf(subresource)
	defer func(done func(error)) { done(err) }(s.record("PUT", gvr, sub, time.Now()))
	r, st, err := s.resource(gvr, sub)
	if err != nil {
		return nil, err
	}
	updater, ok := st.(rest.Updater)
	if !ok {
		return nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), "update")
	}
	obj, m, err := s.incoming(r, namespace, obj)
	if err != nil {
		return nil, err
	}
	ns, name := m.GetNamespace(), m.GetName()
	ctx = s.context(ctx, ns)
	out, _, err = updater.Update(ctx, name, rest.DefaultUpdatedObjectInfo(obj, s.admitUpdate(r, sub, ns, name, &opts)),
		s.validateCreate(r, sub, ns, name, updateToCreateOptions(&opts)), s.validateUpdate(r, sub, ns, name, &opts), false, &opts)
	return out, s.status(err)
}

// admitUpdate is mutating admission of an update, as a transformer of the
// updated object (of a create when there is nothing stored).
func (s *Storage) admitUpdate(r *resource, sub, ns, name string, opts *metav1.UpdateOptions) rest.TransformFunc {
	return func(ctx context.Context, obj, old runtime.Object) (runtime.Object, error) {
		if m, err := meta.Accessor(old); err == nil && m.GetUID() == "" {
			return obj, s.mutate(ctx, s.attributes(r, sub, obj, nil, ns, name, admission.Create, updateToCreateOptions(opts), opts.DryRun))
		}
		return obj, s.mutate(ctx, s.attributes(r, sub, obj, old, ns, name, admission.Update, opts, opts.DryRun))
	}
}

func updateToCreateOptions(o *metav1.UpdateOptions) *metav1.CreateOptions {
	return &metav1.CreateOptions{DryRun: o.DryRun, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation}
}

// Patch applies a JSON merge, JSON or strategic merge patch to the
// stored object (or its subresource) and stores the result, as the HTTP
// handler of a PATCH does: the patch is applied to the object as it is
// stored at each attempt, and a resourceVersion in the patch is a
// precondition.
func (s *Storage) Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresource ...string) (out runtime.Object, err error) {
	sub := subresourceOf(subresource)
	defer func(done func(error)) { done(err) }(s.record("PATCH", gvr, sub, time.Now()))
	r, st, err := s.resource(gvr, sub)
	if err != nil {
		return nil, err
	}
	updater, ok := st.(rest.Updater)
	if !ok {
		return nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), "patch")
	}
	var apply func(current []byte) ([]byte, error)
	switch pt {
	case types.MergePatchType:
		apply = func(current []byte) ([]byte, error) { return jsonpatch.MergePatch(current, data) }
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		apply = p.Apply
	case types.StrategicMergePatchType:
		schemaObj := st.New()
		apply = func(current []byte) ([]byte, error) {
			return strategicpatch.StrategicMergePatch(current, data, schemaObj)
		}
	default:
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType, Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s, %s", types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType)}}
	}
	if !r.namespaced {
		namespace = ""
	}
	ctx = s.context(ctx, namespace)
	codec := s.codecs.LegacyCodec(r.kind.GroupVersion())
	updateOpts := &metav1.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
	newType := r.types[sub]
	transform := func(ctx context.Context, _, current runtime.Object) (runtime.Object, error) {
		// The storage decodes the current object for each attempt: a
		// merge patch may reuse what it does not name (mergeFields).
		byField := pt == types.MergePatchType && reflect.TypeOf(current) == newType
		obj, err := s.patchObject(codec, st, current, data, apply, byField)
		if err != nil {
			return nil, err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if m.GetName() != name {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
		}
		if namespace != "" && m.GetNamespace() != "" && m.GetNamespace() != namespace {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the namespace of the object (%s) does not match the namespace on the request (%s)", m.GetNamespace(), namespace))
		}
		return obj, nil
	}
	out, _, err = updater.Update(ctx, name, rest.DefaultUpdatedObjectInfo(nil, transform, s.admitUpdate(r, sub, namespace, name, updateOpts)),
		s.validateCreate(r, sub, namespace, name, updateToCreateOptions(updateOpts)), s.validateUpdate(r, sub, namespace, name, updateOpts), false, updateOpts)
	return out, s.status(err)
}

// patchObject is current patched: field by field for a merge patch that
// names fields only (mergeFields, then defaulted as a decoded object is),
// else the whole object encoded, patched and decoded.
func (s *Storage) patchObject(codec runtime.Codec, st rest.Storage, current runtime.Object, data []byte, apply func([]byte) ([]byte, error), byField bool) (runtime.Object, error) {
	if byField {
		obj, ok, err := mergeFields(current, data)
		if err != nil {
			return nil, decodeError(data, err)
		}
		if ok {
			s.scheme.Default(obj)
			return obj, nil
		}
	}
	raw, err := runtime.Encode(codec, current)
	if err != nil {
		return nil, err
	}
	patched, err := apply(raw)
	if err != nil {
		return nil, patchError(err)
	}
	obj := st.New()
	if err := runtime.DecodeInto(codec, patched, obj); err != nil {
		return nil, decodeError(patched, err)
	}
	return obj, nil
}

// patchError is the server's answer to a patch that does not apply.
func patchError(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	return apierrors.NewBadRequest(err.Error())
}

// decodeError is the server's answer to a patch whose result is no
// object of the kind.
func decodeError(patched []byte, err error) error {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(patched), err.Error())})
}

// Delete deletes the object as the HTTP handler of a DELETE does.
func (s *Storage) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) (err error) {
	defer func(done func(error)) { done(err) }(s.record("DELETE", gvr, "", time.Now()))
	r, st, err := s.resource(gvr, "")
	if err != nil {
		return err
	}
	deleter, ok := st.(rest.GracefulDeleter)
	if !ok {
		return apierrors.NewMethodNotSupported(gvr.GroupResource(), "delete")
	}
	if !r.namespaced {
		namespace = ""
	}
	ctx = s.context(ctx, namespace)
	attrs := s.attributes(r, "", nil, nil, namespace, name, admission.Delete, &opts, opts.DryRun)
	if err := s.mutate(ctx, attrs); err != nil {
		return s.status(err)
	}
	validate := rest.ValidateAllObjectFunc
	if s.admit != nil {
		validate = rest.AdmissionToValidateObjectDeleteFunc(s.admit, attrs, s.objects)
	}
	_, _, err = deleter.Delete(ctx, name, validate, &opts)
	return s.status(err)
}

// DeleteCollection deletes the objects listOpts selects, as the HTTP
// handler of a DELETE of the collection does.
func (s *Storage) DeleteCollection(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.DeleteOptions, listOpts metav1.ListOptions) (err error) {
	defer func(done func(error)) { done(err) }(s.record("DELETECOLLECTION", gvr, "", time.Now()))
	r, st, err := s.resource(gvr, "")
	if err != nil {
		return err
	}
	deleter, ok := st.(rest.CollectionDeleter)
	if !ok {
		return apierrors.NewMethodNotSupported(gvr.GroupResource(), "deletecollection")
	}
	if !r.namespaced {
		namespace = ""
	}
	internal, err := internalListOptions(listOpts)
	if err != nil {
		return err
	}
	ctx = s.context(ctx, namespace)
	attrs := s.attributes(r, "", nil, nil, namespace, "", admission.Delete, &opts, opts.DryRun)
	if err := s.mutate(ctx, attrs); err != nil {
		return s.status(err)
	}
	validate := rest.ValidateAllObjectFunc
	if s.admit != nil {
		validate = rest.AdmissionToValidateObjectDeleteFunc(s.admit, attrs, s.objects)
	}
	_, err = deleter.DeleteCollection(ctx, validate, &opts, internal)
	return s.status(err)
}

// Get reads the object (or its subresource). What the storage returns is
// its caller's when read from etcd; from the watch cache (a
// resourceVersion given) it is a copy.
func (s *Storage) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.GetOptions, subresource ...string) (out runtime.Object, err error) {
	sub := subresourceOf(subresource)
	defer func(done func(error)) { done(err) }(s.record("GET", gvr, sub, time.Now()))
	r, st, err := s.resource(gvr, sub)
	if err != nil {
		return nil, err
	}
	getter, ok := st.(rest.Getter)
	if !ok {
		return nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), "get")
	}
	if !r.namespaced {
		namespace = ""
	}
	out, err = getter.Get(s.context(ctx, namespace), name, &opts)
	if err != nil {
		return nil, s.status(err)
	}
	if opts.ResourceVersion != "" {
		out = out.DeepCopyObject()
	}
	return out, nil
}

// List lists the objects opts select. shared says the caller only reads
// what it gets (an informer): the watch cache's objects are handed out as
// they are instead of copied.
func (s *Storage) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, shared bool) (out runtime.Object, err error) {
	defer func(done func(error)) { done(err) }(s.record("LIST", gvr, "", time.Now()))
	r, st, err := s.resource(gvr, "")
	if err != nil {
		return nil, err
	}
	lister, ok := st.(rest.Lister)
	if !ok {
		return nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), "list")
	}
	if !r.namespaced {
		namespace = ""
	}
	internal, err := internalListOptions(opts)
	if err != nil {
		return nil, err
	}
	out, err = lister.List(s.context(ctx, namespace), internal)
	if err != nil {
		return nil, s.status(err)
	}
	if !shared {
		out = out.DeepCopyObject()
	}
	return out, nil
}

// Watch watches the objects opts select; shared as for List.
func (s *Storage) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, shared bool) (w watch.Interface, err error) {
	defer func(done func(error)) { done(err) }(s.record("WATCH", gvr, "", time.Now()))
	r, st, err := s.resource(gvr, "")
	if err != nil {
		return nil, err
	}
	watcher, ok := st.(rest.Watcher)
	if !ok {
		return nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), "watch")
	}
	if !r.namespaced {
		namespace = ""
	}
	internal, err := internalListOptions(opts)
	if err != nil {
		return nil, err
	}
	w, err = watcher.Watch(s.context(ctx, namespace), internal)
	if err != nil {
		return nil, s.status(err)
	}
	watches.WithLabelValues(gvr.Resource + "." + gvr.Group).Inc()
	w = countedWatch{Interface: w, once: &sync.Once{}, done: watches.WithLabelValues(gvr.Resource + "." + gvr.Group).Dec}
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		// The watch cache wraps an object it sends to several watchers
		// to encode it once; unwrapping copies it.
		if c, ok := e.Object.(runtime.CacheableObject); ok {
			e.Object = c.GetObject()
		} else if !shared && e.Object != nil {
			e.Object = e.Object.DeepCopyObject()
		}
		return e, true
	}), nil
}

// internalListOptions converts opts as the server's parameter decoding
// does.
func internalListOptions(opts metav1.ListOptions) (*metainternalversion.ListOptions, error) {
	out := &metainternalversion.ListOptions{}
	if err := metainternalversion.Convert_v1_ListOptions_To_internalversion_ListOptions(&opts, out, nil); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return out, nil
}

// status makes err what a client of the HTTP API gets back: a Status
// error, an internal error for anything else.
func (s *Storage) status(err error) error {
	if err == nil {
		return nil
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return err
	}
	return &apierrors.StatusError{ErrStatus: *responsewriters.ErrorToAPIStatus(err)}
}

func subresourceOf(subresources []string) string {
	return strings.Join(subresources, "/")
}
