package table

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/printers"
)

const (
	// chunkSize is how many objects one worker decodes and prints at a time.
	chunkSize = 256
	// cancelCheckEvery is how many objects are decoded between two looks at
	// the context.
	cancelCheckEvery = 64
)

// printTyped decodes objs into gvk's versioned type, converts them to the
// internal version and prints them with kube-apiserver's printer, in chunks
// spread over the available processors.
func (c *Convertor) printTyped(ctx context.Context, gvk schema.GroupVersionKind, kind *typedKind, objs [][]byte, include metav1.IncludeObjectPolicy) ([]metav1.TableRow, error) {
	rows := make([]metav1.TableRow, len(objs))
	err := forEachChunk(ctx, len(objs), func(lo, hi int) error {
		list := reflect.New(kind.list)
		items := reflect.MakeSlice(list.Elem().FieldByName("Items").Type(), hi-lo, hi-lo)
		list.Elem().FieldByName("Items").Set(items)
		typeMetas := make([]metav1.TypeMeta, hi-lo)
		for i := lo; i < hi; i++ {
			if (i-lo)%cancelCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			versioned, ok := reflect.New(kind.versioned).Interface().(kruntime.Object)
			if !ok {
				return fmt.Errorf("%s is not an API object", kind.versioned)
			}
			if err := unmarshal(objs[i], versioned); err != nil {
				return objectError(gvk, objs[i], i, "decoding", err)
			}
			typeMetas[i-lo] = typeMetaOf(versioned)
			internal := items.Index(i - lo).Addr().Interface()
			if err := c.scheme.Convert(versioned, internal, nil); err != nil {
				return objectError(gvk, objs[i], i, "converting", err)
			}
		}
		listObj, ok := list.Interface().(kruntime.Object)
		if !ok {
			return fmt.Errorf("%s is not an API object", kind.list)
		}
		// Convert adds the columns: the convertor prints the rows only.
		table, err := c.printer.ConvertToTable(ctx, listObj, &metav1.TableOptions{NoHeaders: true})
		if err != nil {
			return c.findPrintError(gvk, objs, lo, items, err)
		}
		if len(table.Rows) != hi-lo {
			return fmt.Errorf("printing %s: %d rows for %d objects", gvk.Kind, len(table.Rows), hi-lo)
		}
		for i := lo; i < hi; i++ {
			row := &table.Rows[i-lo]
			if err := setRowObject(row, gvk, objs[i], typeMetas[i-lo], include); err != nil {
				return objectError(gvk, objs[i], i, "reading the metadata of", err)
			}
			rows[i] = *row
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// findPrintError prints the objects of a chunk whose list failed to print one
// by one, to name the object that failed; listErr is the list's error.
func (c *Convertor) findPrintError(gvk schema.GroupVersionKind, objs [][]byte, lo int, items reflect.Value, listErr error) error {
	for i := 0; i < items.Len(); i++ {
		item, ok := items.Index(i).Addr().Interface().(kruntime.Object)
		if !ok {
			break
		}
		if _, err := c.generator.GenerateTable(item, printers.GenerateOptions{Wide: true, NoHeaders: true}); err != nil {
			return objectError(gvk, objs[lo+i], lo+i, "printing", err)
		}
	}
	return fmt.Errorf("printing %s: %w", gvk.Kind, listErr)
}

// printDefault decodes the metadata of objs and prints them with the default
// table convertor's Name and Created At columns.
func (c *Convertor) printDefault(ctx context.Context, gvk schema.GroupVersionKind, objs [][]byte, include metav1.IncludeObjectPolicy) ([]metav1.TableRow, error) {
	rows := make([]metav1.TableRow, len(objs))
	err := forEachChunk(ctx, len(objs), func(lo, hi int) error {
		list := &metav1.PartialObjectMetadataList{Items: make([]metav1.PartialObjectMetadata, hi-lo)}
		for i := lo; i < hi; i++ {
			if (i-lo)%cancelCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := unmarshal(objs[i], &list.Items[i-lo]); err != nil {
				return objectError(gvk, objs[i], i, "decoding", err)
			}
		}
		table, err := c.fallback.ConvertToTable(ctx, list, &metav1.TableOptions{NoHeaders: true})
		if err != nil {
			return fmt.Errorf("printing %s: %w", gvk.Kind, err)
		}
		if len(table.Rows) != hi-lo {
			return fmt.Errorf("printing %s: %d rows for %d objects", gvk.Kind, len(table.Rows), hi-lo)
		}
		for i := lo; i < hi; i++ {
			row := &table.Rows[i-lo]
			if err := setRowObject(row, gvk, objs[i], list.Items[i-lo].TypeMeta, include); err != nil {
				return objectError(gvk, objs[i], i, "reading the metadata of", err)
			}
			rows[i] = *row
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// forEachChunk calls fn on consecutive chunks [lo, hi) of n items, on up to
// GOMAXPROCS goroutines that take the chunks in order. It returns the error
// of the first chunk that failed; no chunk is started after a failure.
func forEachChunk(ctx context.Context, n int, fn func(lo, hi int) error) error {
	chunks := (n + chunkSize - 1) / chunkSize
	if chunks <= 1 {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(0, n)
	}
	workers := min(runtime.GOMAXPROCS(0), chunks)
	errs := make([]error, chunks)
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for !failed.Load() {
				k := int(next.Add(1) - 1)
				if k >= chunks {
					return
				}
				lo := k * chunkSize
				if err := fn(lo, min(lo+chunkSize, n)); err != nil {
					errs[k] = err
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// setRowObject replaces the printer's object of row as include asks: nothing,
// the object's metadata as a PartialObjectMetadata, or the raw object with
// apiVersion and kind (typeMeta holds those the raw JSON had).
func setRowObject(row *metav1.TableRow, gvk schema.GroupVersionKind, raw []byte, typeMeta metav1.TypeMeta, include metav1.IncludeObjectPolicy) error {
	switch include {
	case metav1.IncludeNone:
		row.Object = kruntime.RawExtension{}
	case metav1.IncludeObject:
		row.Object = kruntime.RawExtension{Raw: withTypeMeta(raw, gvk, typeMeta)}
	default:
		m, err := meta.Accessor(row.Object.Object)
		if err != nil {
			return err
		}
		partial := meta.AsPartialObjectMetadata(m)
		partial.TypeMeta = partialObjectMetadataTypeMeta
		row.Object = kruntime.RawExtension{Object: partial}
	}
	return nil
}

// typeMetaOf returns the apiVersion and kind that obj was decoded with.
func typeMetaOf(obj kruntime.Object) metav1.TypeMeta {
	if typeMeta, ok := obj.GetObjectKind().(*metav1.TypeMeta); ok {
		return *typeMeta
	}
	apiVersion, kind := obj.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}
