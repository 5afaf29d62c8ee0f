// Package resource builds etcd-backed REST storage for the karmada.io kinds
// that follow the common pattern: spec and status, validation and write-time
// mutation from apis/<group>/{validation,mutation}, a status subresource,
// short names, categories and printer columns. A kind with more behaviour
// (clusters and their proxy) has its own package instead.
package resource

import (
	"context"
	"fmt"
	"reflect"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Definition describes a kind served by New.
type Definition struct {
	// Resource is the plural resource and its group; Singular its singular name.
	Resource schema.GroupResource
	Singular string
	// Versions are the API versions the kind is served in (reset fields are
	// declared for each).
	Versions        []string
	NamespaceScoped bool
	ShortNames      []string
	Categories      []string
	New, NewList    func() runtime.Object
	// Status says the kind has a status subresource: the main resource
	// ignores status and the subresource ignores everything else.
	Status bool
	// Mutate applies write-time defaults; old is nil on create.
	Mutate func(obj, old runtime.Object)
	// Validate, ValidateUpdate and ValidateStatusUpdate return field errors;
	// nil functions accept everything.
	Validate             func(obj runtime.Object) field.ErrorList
	ValidateUpdate       func(obj, old runtime.Object) field.ErrorList
	ValidateStatusUpdate func(obj, old runtime.Object) field.ErrorList
	// Columns and Cells make the server-side table; without them the table
	// has Name and Age. Cells returns the values after Name, Age comes last.
	Columns []metav1.TableColumnDefinition
	Cells   func(obj runtime.Object) []any
}

// REST is the storage of a kind.
type REST struct {
	*genericregistry.Store
	def *Definition
}

var (
	_ rest.ShortNamesProvider  = &REST{}
	_ rest.CategoriesProvider  = &REST{}
	_ rest.Patcher             = &StatusREST{}
	_ rest.ResetFieldsStrategy = &StatusREST{}
)

// ShortNames implements rest.ShortNamesProvider.
func (r *REST) ShortNames() []string { return r.def.ShortNames }

// Categories implements rest.CategoriesProvider (kubectl get karmada-io).
func (r *REST) Categories() []string { return r.def.Categories }

// StatusREST is the storage of the status subresource of a kind.
type StatusREST struct {
	store *genericregistry.Store
}

// NewStatusREST returns the status subresource over store, a copy of the
// main store with the status strategy as its update strategy.
func NewStatusREST(store *genericregistry.Store) *StatusREST { return &StatusREST{store: store} }

// New returns the storage of the kind and, when it has one, of its status.
func New(scheme *runtime.Scheme, opts generic.RESTOptionsGetter, def *Definition) (*REST, *StatusREST, error) {
	s := NewStrategy(scheme, def)
	store := &genericregistry.Store{
		NewFunc:                   def.New,
		NewListFunc:               def.NewList,
		PredicateFunc:             match,
		DefaultQualifiedResource:  def.Resource,
		SingularQualifiedResource: schema.GroupResource{Group: def.Resource.Group, Resource: def.Singular},
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            tableConvertor{def: def},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: opts, AttrFunc: getAttrs}); err != nil {
		return nil, nil, fmt.Errorf("completing the %s store: %w", def.Resource, err)
	}
	r := &REST{Store: store, def: def}
	if !def.Status {
		return r, nil, nil
	}
	status := *store
	status.CreateStrategy, status.DeleteStrategy = nil, nil
	ss := NewStatusStrategy(s)
	status.UpdateStrategy, status.ResetFieldsStrategy = ss, ss
	return r, &StatusREST{store: &status}, nil
}

// New implements rest.Storage.
func (r *StatusREST) New() runtime.Object { return r.store.New() }

// Destroy implements rest.Storage; the main store owns the backend.
func (r *StatusREST) Destroy() {}

// Get implements rest.Getter.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update implements rest.Updater. A subresource never creates.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable implements rest.TableConvertor.
func (r *StatusREST) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, obj, opts)
}

// Strategy is the create, update and delete strategy of a kind's main
// resource: status is the status subresource's (reset on create, kept on
// update, whoever writes), the generation follows the spec, def's Mutate
// applies defaults and its validation functions check the result.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	def *Definition
}

// NewStrategy returns the strategy of the kind def describes.
func NewStrategy(typer runtime.ObjectTyper, def *Definition) *Strategy {
	return &Strategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, def: def}
}

// NewStatusStrategy returns the update strategy of the status subresource
// of s's kind: everything but status (and metadata) is kept.
func NewStatusStrategy(s *Strategy) *StatusStrategy { return &StatusStrategy{Strategy: s} }

func (s *Strategy) NamespaceScoped() bool { return s.def.NamespaceScoped }

func (s *Strategy) resetFields(path string) map[fieldpath.APIVersion]*fieldpath.Set {
	if !s.def.Status {
		return nil
	}
	m := map[fieldpath.APIVersion]*fieldpath.Set{}
	for _, v := range s.def.Versions {
		gv := schema.GroupVersion{Group: s.def.Resource.Group, Version: v}
		m[fieldpath.APIVersion(gv.String())] = fieldpath.NewSet(fieldpath.MakePathOrDie(path))
	}
	return m
}

func (s *Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.resetFields("status")
}

func (s *Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	if s.def.Status {
		setStatus(obj, reflect.Value{})
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetGeneration(1)
	}
	if s.def.Mutate != nil {
		s.def.Mutate(obj, nil)
	}
}

func (s *Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	if s.def.Status {
		setStatus(obj, statusOf(old))
	}
	if s.def.Mutate != nil {
		s.def.Mutate(obj, old)
	}
	newMeta, err1 := meta.Accessor(obj)
	oldMeta, err2 := meta.Accessor(old)
	if err1 == nil && err2 == nil && !apiequality.Semantic.DeepEqual(specOf(obj), specOf(old)) {
		newMeta.SetGeneration(oldMeta.GetGeneration() + 1)
	}
}

func (s *Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	if s.def.Validate == nil {
		return nil
	}
	return s.def.Validate(obj)
}

func (s *Strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	if s.def.ValidateUpdate == nil {
		return nil
	}
	return s.def.ValidateUpdate(obj, old)
}

func (*Strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (*Strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func (*Strategy) Canonicalize(runtime.Object) {}

func (*Strategy) AllowCreateOnUpdate() bool { return false }

func (*Strategy) AllowUnconditionalUpdate() bool { return true }

// StatusStrategy is the update strategy of a kind's status subresource.
type StatusStrategy struct {
	*Strategy
}

func (s *StatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.resetFields("spec")
}

// PrepareForUpdate keeps everything but status (and metadata) from the stored object.
func (s *StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	status := statusOf(obj)
	keep := reflect.ValueOf(old.DeepCopyObject()).Elem()
	newVal := reflect.ValueOf(obj).Elem()
	for i := range newVal.NumField() {
		switch newVal.Type().Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
		default:
			newVal.Field(i).Set(keep.Field(i))
		}
	}
	setStatus(obj, status)
}

func (s *StatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	if s.def.ValidateStatusUpdate == nil {
		return nil
	}
	return s.def.ValidateStatusUpdate(obj, old)
}

// statusOf returns the Status field of a kind's object (a pointer to a struct).
func statusOf(obj runtime.Object) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName("Status")
}

// setStatus sets the Status field to v, or to its zero value when v is invalid.
func setStatus(obj runtime.Object, v reflect.Value) {
	f := reflect.ValueOf(obj).Elem().FieldByName("Status")
	if !f.IsValid() {
		return
	}
	if !v.IsValid() {
		f.Set(reflect.Zero(f.Type()))
		return
	}
	f.Set(v)
}

// specOf returns what counts as the desired state of an object: every field
// except type, object metadata and status. The generation follows it.
func specOf(obj runtime.Object) []any {
	v := reflect.ValueOf(obj).Elem()
	var spec []any
	for i := range v.NumField() {
		switch v.Type().Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
		default:
			spec = append(spec, v.Field(i).Interface())
		}
	}
	return spec
}

func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	om, ok := reflect.ValueOf(obj).Elem().FieldByName("ObjectMeta").Addr().Interface().(*metav1.ObjectMeta)
	if !ok {
		return nil, nil, fmt.Errorf("%T has no ObjectMeta", obj)
	}
	return m.GetLabels(), generic.ObjectMetaFieldsSet(om, m.GetNamespace() != ""), nil
}

func match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: getAttrs}
}

// Storage returns the storage map of a group version: each kind and, when
// it has one, its status subresource.
func Storage(scheme *runtime.Scheme, opts generic.RESTOptionsGetter, defs []*Definition) (map[string]rest.Storage, error) {
	m := map[string]rest.Storage{}
	for _, def := range defs {
		r, status, err := New(scheme, opts, def)
		if err != nil {
			return nil, err
		}
		m[def.Resource.Resource] = r
		if status != nil {
			m[def.Resource.Resource+"/status"] = status
		}
	}
	return m, nil
}

// Validator adapts a typed validation function to a Definition.
func Validator[T runtime.Object](f func(T) field.ErrorList) func(runtime.Object) field.ErrorList {
	return func(obj runtime.Object) field.ErrorList { return f(obj.(T)) }
}

// UpdateValidator adapts a typed update validation function to a Definition.
func UpdateValidator[T runtime.Object](f func(T, T) field.ErrorList) func(runtime.Object, runtime.Object) field.ErrorList {
	return func(obj, old runtime.Object) field.ErrorList { return f(obj.(T), old.(T)) }
}
