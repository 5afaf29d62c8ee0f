package multiget

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
	watchtools "k8s.io/client-go/tools/watch"
)

// watched is one target's first read for a watch.
type watched struct {
	result  *resource.Result
	mapping *meta.RESTMapping
	// table is the first read as a table (human-readable output), objects
	// the objects otherwise.
	table   *metav1.Table
	objects []runtime.Object
	// resourceVersion is where the watch starts: the list's, or the named
	// object's.
	resourceVersion string
}

// watch lists then watches one resource type in every target, as kubectl
// get --watch does in one cluster; events of all clusters go to one
// output, each row with its cluster. A target that cannot be read or
// watched is named in a warning; the others go on until ctx ends.
func (o *GetOptions) watch(ctx context.Context, cp genericclioptions.RESTClientGetter, targets []Target, namespace string, args []string) error {
	human := o.humanReadable()
	wide := human && o.outputFormat() == "wide"
	// mappings are the watched kind's, by cluster (the DRIFT of an event's
	// member object is read from its Work).
	mappings := map[string]*meta.RESTMapping{}
	outcomes := ReadAll(ctx, targets, o.Selection.Timeout, func(ctx context.Context, t Target) (watched, error) {
		return o.firstRead(ctx, t, namespace, args, human)
	})
	var live []Outcome[watched]
	for _, oc := range outcomes {
		switch {
		case oc.Err == nil:
			live = append(live, oc)
		case o.IgnoreNotFound && apierrors.IsNotFound(oc.Err):
		case len(targets) == 1:
			return oc.Err
		default:
			Warn(o.ErrOut, oc.Target.Cluster, oc.Err)
		}
	}
	if len(live) == 0 {
		if len(targets) > 1 {
			return fmt.Errorf("none of the %d clusters could be watched", len(targets))
		}
		return nil
	}
	w := printers.GetNewTabWriter(o.Out)
	// takenOver are, by cluster, the objects of the first read the control
	// plane took over untouched; their events show them adopted too.
	takenOver := map[string]sets.Set[string]{}
	var columns []metav1.TableColumnDefinition
	var printer printers.ResourcePrinter
	var err error
	if human {
		var parts []Part
		for _, oc := range live {
			parts = append(parts, Part{Cluster: oc.Target.Cluster, ControlPlane: oc.Target.ControlPlane, Mapping: oc.Value.mapping, Table: oc.Value.table})
			mappings[oc.Target.Cluster] = oc.Value.mapping
		}
		o.markTakenOver(ctx, cp, o.Selection.Timeout, parts)
		if wide {
			o.markDrift(ctx, cp, o.Selection.Timeout, parts)
		}
		for _, p := range parts {
			if p.TakenOver.Len() > 0 {
				takenOver[p.Cluster] = p.TakenOver
			}
		}
		merged := Merge(parts)
		first := live[0].Value.mapping
		printer, err = o.tablePrinter(first, o.AllNamespaces && first.Scope.Name() == meta.RESTScopeNameNamespace, false, false)
		if err != nil {
			return err
		}
		for _, m := range merged {
			if columns == nil {
				columns = m.Table.ColumnDefinitions
			}
			if o.WatchOnly {
				continue
			}
			if err := printer.PrintObj(o.event(watch.Added, m.Table), w); err != nil {
				return err
			}
		}
	} else {
		pf := o.printFlags()
		if printer, err = pf.ToPrinter(); err != nil {
			return err
		}
		for _, oc := range live {
			for _, obj := range oc.Value.objects {
				if o.WatchOnly {
					break
				}
				if err := printer.PrintObj(o.event(watch.Added, WithCluster(obj, oc.Target)), w); err != nil {
					return err
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}

	var mu sync.Mutex
	print := func(t Target, e watch.Event) error {
		obj := e.Object
		if human {
			table, err := DecodeTable(obj, o.now(), true)
			if err != nil {
				return err
			}
			parts := []Part{{Cluster: t.Cluster, ControlPlane: t.ControlPlane, Mapping: mappings[t.Cluster], Table: table}}
			if wide && e.Type != watch.Deleted {
				o.markDrift(ctx, cp, o.Selection.Timeout, parts)
			}
			part := parts[0]
			rows := make([]metav1.TableRow, 0, len(table.Rows))
			for _, r := range table.Rows {
				key := rowKey(r)
				rows = append(rows, ClusterRow(r, t.Cluster, t.ControlPlane, takenOver[t.Cluster].Has(key), part.Drift[key]))
			}
			obj = &metav1.Table{ColumnDefinitions: columns, Rows: rows}
		} else {
			obj = WithCluster(obj, t)
		}
		mu.Lock()
		defer mu.Unlock()
		if err := printer.PrintObj(o.event(e.Type, obj), w); err != nil {
			return err
		}
		return w.Flush()
	}
	var wg sync.WaitGroup
	for _, oc := range live {
		wi, err := oc.Value.result.Watch(oc.Value.resourceVersion)
		if err != nil {
			mu.Lock()
			Warn(o.ErrOut, oc.Target.Cluster, err)
			mu.Unlock()
			continue
		}
		wg.Go(func() {
			_, err := watchtools.UntilWithoutRetry(ctx, wi, func(e watch.Event) (bool, error) {
				switch e.Type {
				case watch.Bookmark:
					return false, nil
				case watch.Error:
					return false, apierrors.FromObject(e.Object)
				}
				return false, print(oc.Target, e)
			})
			if err != nil && !errors.Is(err, watchtools.ErrWatchClosed) && ctx.Err() == nil {
				mu.Lock()
				Warn(o.ErrOut, oc.Target.Cluster, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return nil
}

// event wraps obj as a watch event for --output-watch-events.
func (o *GetOptions) event(t watch.EventType, obj runtime.Object) runtime.Object {
	if !o.OutputWatchEvents {
		return obj
	}
	return &metav1.WatchEvent{Type: string(t), Object: runtime.RawExtension{Object: obj}}
}

// firstRead reads what a watch starts from: one resource type, as a
// whole list or as the one object named.
func (o *GetOptions) firstRead(ctx context.Context, t Target, namespace string, args []string, human bool) (watched, error) {
	if err := Probe(ctx, t); err != nil {
		return watched{}, err
	}
	// One request: the list and its resourceVersion, where the watch
	// starts.
	r := o.builder(t, namespace, args, human, 0, false).SingleResourceType().Do()
	if err := r.Err(); err != nil {
		return watched{}, err
	}
	infos, err := r.Infos()
	if err != nil {
		return watched{}, err
	}
	if len(infos) != 1 {
		return watched{}, fmt.Errorf("watch is only supported on individual resources and resource collections, but %d resources were found", len(infos))
	}
	info := infos[0]
	out := watched{result: r, mapping: info.Mapping}
	rv := func(obj runtime.Object) string {
		if m, err := meta.Accessor(obj); err == nil {
			return m.GetResourceVersion()
		}
		return ""
	}
	if human {
		if out.table, err = DecodeTable(info.Object, o.now(), true); err != nil {
			return watched{}, err
		}
		out.resourceVersion = out.table.ResourceVersion
		if info.Name != "" && len(out.table.Rows) == 1 && out.table.Rows[0].Object.Object != nil {
			out.resourceVersion = rv(out.table.Rows[0].Object.Object)
		}
		return out, nil
	}
	if meta.IsListType(info.Object) {
		if out.objects, err = meta.ExtractList(info.Object); err != nil {
			return watched{}, err
		}
		if l, err := meta.ListAccessor(info.Object); err == nil {
			out.resourceVersion = l.GetResourceVersion()
		}
		return out, nil
	}
	out.objects = []runtime.Object{info.Object}
	out.resourceVersion = rv(info.Object)
	return out, nil
}
