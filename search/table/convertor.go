package table

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"

	// The printers import the API groups kubectl knows; these are the
	// remaining groups kube-apiserver serves (pkg/controlplane's
	// import_known_versions.go), so that every built-in kind converts to its
	// internal version.
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apiserverinternal/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"
)

// defaultTableKinds are the built-in kinds that kube-apiserver serves with
// rest.NewDefaultTableConvertor even though they are built in (see the
// TableConvertor of their storage in k8s.io/kubernetes/pkg/registry). Some of
// them have a printer in AddHandlers that kube-apiserver does not use.
var defaultTableKinds = map[schema.GroupKind]bool{
	{Group: "", Kind: "LimitRange"}:                           true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: true,
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}:     true,
}

// partialObjectMetadataTypeMeta is the type of a row's object when the
// metadata is asked for, as kube-apiserver sets it for a meta.k8s.io/v1 Table.
var partialObjectMetadataTypeMeta = metav1.TypeMeta{
	APIVersion: metav1.SchemeGroupVersion.String(),
	Kind:       "PartialObjectMetadata",
}

// tableTypeMeta is the type of the returned table.
var tableTypeMeta = metav1.TypeMeta{
	APIVersion: metav1.SchemeGroupVersion.String(),
	Kind:       "Table",
}

// Convertor turns cached objects into a metav1.Table as kube-apiserver prints
// them. It is safe for concurrent use.
type Convertor struct {
	// scheme holds the versioned and internal types of the built-in kinds.
	scheme *runtime.Scheme
	// generator runs kube-apiserver's printers on internal objects.
	generator *printers.HumanReadableGenerator
	// printer is the table convertor of kube-apiserver's storage of the
	// built-in kinds, on top of generator.
	printer printerstorage.TableConvertor
	// printed holds the internal types that generator has a printer for.
	printed map[reflect.Type]bool
	// fallback prints every kind without a printer.
	fallback rest.TableConvertor
	// fallbackColumns are the columns fallback prints.
	fallbackColumns []metav1.TableColumnDefinition
	// kinds caches, per GroupVersionKind, its *typedKind or nil when the
	// kind gets the default columns.
	kinds sync.Map
}

// typedKind is a built-in kind printed by kube-apiserver's printers.
type typedKind struct {
	// versioned is the struct type of the served object, e.g. v1.Pod.
	versioned reflect.Type
	// list is the struct type of the internal list the printer takes,
	// e.g. core.PodList.
	list reflect.Type
	// columns are the columns the printer prints, wide ones included.
	columns []metav1.TableColumnDefinition
}

// recordingHandler registers printers with a generator and records the
// types they print, which printers.HumanReadableGenerator does not expose.
type recordingHandler struct {
	generator *printers.HumanReadableGenerator
	printed   map[reflect.Type]bool
}

// TableHandler registers printFunc with the generator and records the type
// of its first argument.
func (r *recordingHandler) TableHandler(columns []metav1.TableColumnDefinition, printFunc interface{}) error {
	if err := r.generator.TableHandler(columns, printFunc); err != nil {
		return err
	}
	r.printed[reflect.TypeOf(printFunc).In(0)] = true
	return nil
}

// New returns a Convertor with kube-apiserver's printers for the built-in
// kinds registered in k8s.io/kubernetes/pkg/api/legacyscheme.
func New() (*Convertor, error) {
	rec := &recordingHandler{
		generator: printers.NewTableGenerator(),
		printed:   map[reflect.Type]bool{},
	}
	printersinternal.AddHandlers(rec)
	if len(rec.printed) == 0 {
		return nil, fmt.Errorf("no printers were registered")
	}

	fallback := rest.NewDefaultTableConvertor(schema.GroupResource{})
	empty, err := fallback.ConvertToTable(context.Background(), &metav1.PartialObjectMetadataList{}, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the default table columns: %w", err)
	}
	return &Convertor{
		scheme:          legacyscheme.Scheme,
		generator:       rec.generator,
		printer:         printerstorage.TableConvertor{TableGenerator: rec.generator},
		printed:         rec.printed,
		fallback:        fallback,
		fallbackColumns: empty.ColumnDefinitions,
	}, nil
}

// Convert prints objs (raw JSON of objects of one kind, as the member served
// them; gvk is their kind) into one Table.
//
// Built-in kinds get kube-apiserver's columns, wide ones included, as
// kube-apiserver always prints them; other kinds (CRDs, unknown kinds) get the
// Name and Created At columns of the default table convertor. opts carries
// NoHeaders and IncludeObject: with None a row has no object, with Metadata
// (the default when unset) it has a meta.k8s.io/v1 PartialObjectMetadata with
// the object's metadata, and with Object the raw object, given apiVersion and
// kind from gvk when the raw JSON lacks them. listMeta becomes the table's
// ListMeta. An object that cannot be decoded or printed fails the whole call
// with an error naming it; an unknown IncludeObject is a BadRequest error.
func (c *Convertor) Convert(ctx context.Context, gvk schema.GroupVersionKind, objs [][]byte, opts *metav1.TableOptions, listMeta metav1.ListMeta) (*metav1.Table, error) {
	include := metav1.IncludeMetadata
	noHeaders := false
	if opts != nil {
		noHeaders = opts.NoHeaders
		switch opts.IncludeObject {
		case "", metav1.IncludeMetadata:
		case metav1.IncludeNone, metav1.IncludeObject:
			include = opts.IncludeObject
		default:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", opts.IncludeObject))
		}
	}

	var (
		rows    []metav1.TableRow
		columns []metav1.TableColumnDefinition
		err     error
	)
	if kind := c.typedKindFor(gvk); kind != nil {
		columns = kind.columns
		rows, err = c.printTyped(ctx, gvk, kind, objs, include)
	} else {
		columns = c.fallbackColumns
		rows, err = c.printDefault(ctx, gvk, objs, include)
	}
	if err != nil {
		return nil, err
	}

	table := &metav1.Table{
		TypeMeta: tableTypeMeta,
		ListMeta: listMeta,
		Rows:     rows,
	}
	if !noHeaders {
		table.ColumnDefinitions = append([]metav1.TableColumnDefinition(nil), columns...)
	}
	return table, nil
}

// typedKindFor returns how kube-apiserver's printers print gvk, or nil when
// gvk gets the default columns.
func (c *Convertor) typedKindFor(gvk schema.GroupVersionKind) *typedKind {
	if cached, ok := c.kinds.Load(gvk); ok {
		kind, _ := cached.(*typedKind)
		return kind
	}
	kind := c.resolveTypedKind(gvk)
	c.kinds.Store(gvk, kind)
	return kind
}

// resolveTypedKind finds the versioned type of gvk, the internal list type
// that a printer takes and the printer's columns; it returns nil when gvk is
// not a built-in kind with a printer that kube-apiserver uses.
func (c *Convertor) resolveTypedKind(gvk schema.GroupVersionKind) *typedKind {
	if gvk.Version == runtime.APIVersionInternal || defaultTableKinds[gvk.GroupKind()] {
		return nil
	}
	versioned, err := c.scheme.New(gvk)
	if err != nil {
		return nil
	}
	list, err := c.scheme.New(schema.GroupVersionKind{Group: gvk.Group, Version: runtime.APIVersionInternal, Kind: gvk.Kind + "List"})
	if err != nil {
		return nil
	}
	listType := reflect.TypeOf(list)
	if !c.printed[listType] || listType.Kind() != reflect.Pointer {
		return nil
	}
	items, ok := listType.Elem().FieldByName("Items")
	if !ok || items.Type.Kind() != reflect.Slice || items.Type.Elem().Kind() != reflect.Struct {
		return nil
	}
	if !c.printed[reflect.PointerTo(items.Type.Elem())] {
		return nil
	}
	empty, err := c.generator.GenerateTable(list, printers.GenerateOptions{Wide: true})
	if err != nil {
		return nil
	}
	versionedType := reflect.TypeOf(versioned)
	if versionedType.Kind() != reflect.Pointer {
		return nil
	}
	return &typedKind{
		versioned: versionedType.Elem(),
		list:      listType.Elem(),
		columns:   empty.ColumnDefinitions,
	}
}
