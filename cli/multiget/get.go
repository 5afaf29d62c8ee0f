package multiget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest"
	"k8s.io/kubectl/pkg/cmd/get"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

// defaultChunkSize is kubectl's: lists are read 500 objects at a time.
const defaultChunkSize = 500

// GetOptions is karmadactl get: kubectl get over the clusters of a
// Selection, in one table.
type GetOptions struct {
	// PrintFlags are kubectl get's (-o, --no-headers, --show-labels,
	// --sort-by, -L, --show-kind, --template).
	PrintFlags *get.PrintFlags
	Selection  Selection

	LabelSelector  string
	FieldSelector  string
	AllNamespaces  bool
	IgnoreNotFound bool
	ChunkSize      int64

	Watch             bool
	WatchOnly         bool
	OutputWatchEvents bool

	genericiooptions.IOStreams

	// now is the clock of the AGE of objects a server could not print.
	now func() time.Time
	// tables decodes server-side tables into typed Tables.
	tables *runtime.Scheme
	// adoption looks up member objects taken over untouched; built from
	// the control plane's getter when nil.
	adoption *adoptionLookup
	// drift reads Works for DRIFT (-o wide); made on first use, or set
	// by tests.
	drift *driftLookup
}

// NewGetOptions returns kubectl's defaults and karmadactl's default scope.
func NewGetOptions(streams genericiooptions.IOStreams) *GetOptions {
	return &GetOptions{
		PrintFlags: get.NewGetPrintFlags(),
		Selection:  Selection{Scope: clusterproxy.ScopeKarmada, Timeout: DefaultMemberTimeout},
		ChunkSize:  defaultChunkSize,
		IOStreams:  streams,
		now:        time.Now,
		tables:     newTableScheme(),
	}
}

// newTableScheme knows the kinds of a server's answer as=Table: reading
// tables as typed Tables, their rows' objects left raw, costs a third of
// reading them as unstructured objects (docs/performance.md, "CLI": 3,000 pods).
func newTableScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(metav1.AddMetaToScheme(s))
	utilruntime.Must(metav1beta1.AddMetaToScheme(s))
	return s
}

// outputFormat is -o, with --template alone meaning go-template as in
// kubectl.
func (o *GetOptions) outputFormat() string {
	format := *o.PrintFlags.OutputFormat
	if t := o.PrintFlags.TemplateFlags.TemplateArgument; format == "" && t != nil && *t != "" {
		return "go-template"
	}
	return format
}

// humanReadable says whether the output is a table (the default or wide):
// the servers then print it (as=Table) and this package adds CLUSTER and
// ADOPTION; other formats print the objects themselves.
func (o *GetOptions) humanReadable() bool {
	f := o.outputFormat()
	return f == "" || f == "wide"
}

func (o *GetOptions) sortBy() string {
	if s := o.PrintFlags.HumanReadableFlags.SortBy; s != nil {
		return *s
	}
	return ""
}

// Validate checks the flags that do not need a server.
func (o *GetOptions) Validate(args []string) error {
	if len(args) == 0 {
		return errors.New("you must specify the type of resource to get (e.g. pods, deployments.apps)")
	}
	if o.OutputWatchEvents && !o.Watch && !o.WatchOnly {
		return errors.New("--output-watch-events option can only be used with --watch or --watch-only")
	}
	if show := o.PrintFlags.HumanReadableFlags.ShowLabels; show != nil && *show && !o.humanReadable() {
		return fmt.Errorf("--show-labels option cannot be used with %s printer", o.outputFormat())
	}
	if o.Selection.Timeout < 0 {
		return errors.New("--member-timeout must not be negative")
	}
	// The printer is built once here so a bad -o fails before any request.
	pf := o.printFlags()
	_, err := pf.ToPrinter()
	return err
}

// printFlags is a copy of the print flags that printing may change.
func (o *GetOptions) printFlags() get.PrintFlags {
	pf := o.PrintFlags.Copy()
	human := *pf.HumanReadableFlags
	pf.HumanReadableFlags = &human
	return pf
}

// Run reads args (kubectl get's TYPE[.VERSION.GROUP] [NAME...] or
// TYPE/NAME...) from every target and prints them. A target that cannot
// be read is named in a warning; Run fails only when no target could be
// read (with one target, its error, as kubectl's).
func (o *GetOptions) Run(ctx context.Context, cp genericclioptions.RESTClientGetter, list ListClusters, args []string) error {
	if err := o.Validate(args); err != nil {
		return err
	}
	namespace, _, err := cp.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	sel := o.Selection
	sel.RequestTimeout = !o.Watch && !o.WatchOnly
	targets, err := Resolve(ctx, cp, list, sel)
	if err != nil {
		return err
	}
	if o.Watch || o.WatchOnly {
		return o.watch(ctx, cp, targets, namespace, args)
	}
	human := o.humanReadable()
	outcomes := ReadAll(ctx, targets, sel.Timeout, func(ctx context.Context, t Target) (read, error) {
		return o.read(ctx, t, namespace, args, human)
	})
	var errs []error
	for _, oc := range outcomes {
		if oc.Err == nil {
			continue
		}
		errs = append(errs, oc.Err)
		if len(targets) > 1 {
			Warn(o.ErrOut, oc.Target.Cluster, oc.Err)
		}
	}
	if human {
		ps := parts(outcomes)
		o.markTakenOver(ctx, cp, sel.Timeout, ps)
		if o.outputFormat() == "wide" {
			o.markDrift(ctx, cp, sel.Timeout, ps)
		}
		err = o.printTables(outcomes, ps, namespace)
	} else {
		err = o.printObjects(outcomes)
	}
	if err != nil {
		return err
	}
	return result(len(targets), errs)
}

// read is what one target gave: its objects, whether the arguments named
// a single object, and for human-readable output its tables, one per
// info, decoded in the target's goroutine while others are still read.
type read struct {
	infos      []*resource.Info
	singleItem bool
	tables     []*metav1.Table
}

func (o *GetOptions) read(ctx context.Context, t Target, namespace string, args []string, human bool) (read, error) {
	if err := Probe(ctx, t); err != nil {
		return read{}, err
	}
	chunk := o.ChunkSize
	if o.sortBy() != "" {
		chunk = 0 // sorted as a whole, as kubectl does
	}
	// Tables are read typed, unless sorting needs the rows' whole objects
	// as unstructured ones; a server that answers something else than a
	// Table is read again as kubectl reads it.
	typed := human && o.sortBy() == ""
	out, err := o.readWith(t, namespace, args, human, chunk, typed)
	if typed && notRegistered(err) {
		out, err = o.readWith(t, namespace, args, human, chunk, false)
	}
	if !human {
		return out, err
	}
	for _, info := range out.infos {
		table, decodeErr := DecodeTable(info.Object, o.now(), o.sortBy() != "")
		if decodeErr != nil {
			return read{}, decodeErr
		}
		out.tables = append(out.tables, table)
	}
	return out, err
}

func (o *GetOptions) readWith(t Target, namespace string, args []string, human bool, chunk int64, typed bool) (read, error) {
	r := o.builder(t, namespace, args, human, chunk, typed).Flatten().Do()
	if o.IgnoreNotFound {
		r.IgnoreErrors(apierrors.IsNotFound)
	}
	if err := r.Err(); err != nil {
		return read{}, err
	}
	var out read
	infos, err := r.IntoSingleItemImplied(&out.singleItem).Infos()
	out.infos = infos
	return out, err
}

// notRegistered says whether err, or one of an aggregate, is a decoding
// error of a kind the table scheme does not know.
func notRegistered(err error) bool {
	if err == nil {
		return false
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		return slices.ContainsFunc(agg.Errors(), notRegistered)
	}
	return runtime.IsNotRegisteredError(err)
}

// builder is kubectl get's resource builder for a target, reading typed
// Tables when typed.
func (o *GetOptions) builder(t Target, namespace string, args []string, human bool, chunk int64, typed bool) *resource.Builder {
	b := resource.NewBuilder(t.Getter)
	if typed {
		b = b.WithScheme(o.tables, metav1.SchemeGroupVersion)
	} else {
		b = b.Unstructured()
	}
	return b.
		NamespaceParam(namespace).DefaultNamespace().AllNamespaces(o.AllNamespaces).
		LabelSelectorParam(o.LabelSelector).
		FieldSelectorParam(o.FieldSelector).
		RequestChunksOf(chunk).
		ResourceTypeOrNameArgs(true, args...).
		ContinueOnError().
		Latest().
		TransformRequests(o.transformRequests(human))
}

// transformRequests asks for server-side tables when printing a table, as
// kubectl get does.
func (o *GetOptions) transformRequests(human bool) resource.RequestTransform {
	return func(req *rest.Request) {
		if !human {
			return
		}
		req.SetHeader("Accept", strings.Join([]string{
			fmt.Sprintf("application/json;as=Table;v=%s;g=%s", metav1.SchemeGroupVersion.Version, metav1.GroupName),
			fmt.Sprintf("application/json;as=Table;v=%s;g=%s", metav1beta1.SchemeGroupVersion.Version, metav1beta1.GroupName),
			"application/json",
		}, ","))
		if o.sortBy() != "" {
			// Sorting reads fields of the whole object.
			req.Param("includeObject", string(metav1.IncludeObject))
		}
	}
}

// tablePrinter is kubectl's table printer for one resource, sorting the
// rows by --sort-by if sorted.
func (o *GetOptions) tablePrinter(mapping *meta.RESTMapping, withNamespace, withKind, sorted bool) (printers.ResourcePrinter, error) {
	pf := o.printFlags()
	if mapping != nil {
		pf.SetKind(mapping.GroupVersionKind.GroupKind())
	}
	if withNamespace {
		_ = pf.EnsureWithNamespace()
	}
	if withKind {
		_ = pf.EnsureWithKind()
	}
	p, err := pf.ToPrinter()
	if err != nil {
		return nil, err
	}
	if s := o.sortBy(); s != "" && sorted {
		p = &get.SortingPrinter{Delegate: p, SortField: s}
	}
	return p, nil
}

// parts are the tables the targets answered.
func parts(outcomes []Outcome[read]) []Part {
	var parts []Part
	for _, oc := range outcomes {
		for i, table := range oc.Value.tables {
			parts = append(parts, Part{Cluster: oc.Target.Cluster, ControlPlane: oc.Target.ControlPlane, Mapping: oc.Value.infos[i].Mapping, Table: table})
		}
	}
	return parts
}

// markTakenOver finds, for ADOPTION, the member objects of ps the control
// plane took over without writing them (see adoptionLookup), within
// timeout (0: no bound).
func (o *GetOptions) markTakenOver(ctx context.Context, cp genericclioptions.RESTClientGetter, timeout time.Duration, ps []Part) {
	if o.adoption == nil {
		l, err := newAdoptionLookup(cp)
		if err != nil {
			return // the rows show what their labels say
		}
		o.adoption = &l
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	o.adoption.markTakenOver(ctx, ps)
}

// markDrift fills, for DRIFT, the drift the Works of ps's member objects
// record (see driftLookup), within timeout (0: no bound).
func (o *GetOptions) markDrift(ctx context.Context, cp genericclioptions.RESTClientGetter, timeout time.Duration, ps []Part) {
	if o.drift == nil {
		l, err := newDriftLookup(cp)
		if err != nil {
			return // the rows show DriftUnknown
		}
		o.drift = &l
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	o.drift.markDrift(ctx, ps)
}

// printTables prints one table per resource over all clusters, separated
// by a blank line, as kubectl get separates resources.
func (o *GetOptions) printTables(outcomes []Outcome[read], ps []Part, namespace string) error {
	merged := Merge(ps)
	withKind := multipleKinds(merged)
	tracking := &trackingWriter{w: o.Out}
	sep := &separatorWriter{w: tracking}
	w := printers.GetNewTabWriter(sep)
	allNamespaced := !o.AllNamespaces
	for i, m := range merged {
		namespaced := m.Mapping.Scope.Name() == meta.RESTScopeNameNamespace
		allNamespaced = allNamespaced && namespaced
		if i > 0 {
			_ = w.Flush()
			w.SetRememberedWidths(nil)
			if !*o.PrintFlags.NoHeaders && tracking.written > 0 {
				sep.ready = true
			}
		}
		p, err := o.tablePrinter(m.Mapping, o.AllNamespaces && namespaced, withKind, true)
		if err != nil {
			return err
		}
		if err := p.PrintObj(m.Table, w); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if tracking.written == 0 && !o.IgnoreNotFound && readAny(outcomes) {
		if allNamespaced {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", namespace)
		} else {
			fmt.Fprintln(o.ErrOut, "No resources found")
		}
	}
	return nil
}

// printObjects prints the objects of every cluster as one list (or the
// one object the arguments named, from one cluster), for -o
// json|yaml|name|jsonpath|go-template|custom-columns. Each member object
// carries the cluster it was read from in the annotation
// resource.karmada.io/cached-from-cluster, as karmada-search's objects do.
func (o *GetOptions) printObjects(outcomes []Outcome[read]) error {
	var items []runtime.Object
	single := false
	for _, oc := range outcomes {
		if oc.Err != nil && len(oc.Value.infos) == 0 {
			continue
		}
		single = oc.Value.singleItem
		for _, info := range oc.Value.infos {
			items = append(items, WithCluster(info.Object, oc.Target))
		}
	}
	pf := o.printFlags()
	p, err := pf.ToPrinter()
	if err != nil {
		return err
	}
	if s := o.sortBy(); s != "" {
		p = &get.SortingPrinter{Delegate: p, SortField: s}
	}
	if single && len(items) == 1 {
		return p.PrintObj(items[0], o.Out)
	}
	if len(items) == 0 && o.IgnoreNotFound {
		return nil
	}
	list := &unstructured.UnstructuredList{Object: map[string]interface{}{
		"kind": "List", "apiVersion": "v1", "metadata": map[string]interface{}{"resourceVersion": ""},
	}}
	for _, it := range items {
		if u, ok := it.(*unstructured.Unstructured); ok {
			list.Items = append(list.Items, *u)
		}
	}
	return p.PrintObj(list, o.Out)
}

// WithCluster returns a member object annotated with the cluster it was
// read from (resource.karmada.io/cached-from-cluster); control-plane and
// non-unstructured objects are returned as they are.
func WithCluster(obj runtime.Object, t Target) runtime.Object {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || t.ControlPlane {
		return obj
	}
	u = u.DeepCopy()
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[searchv1alpha1.CachedFromClusterAnnotation] = t.Cluster
	u.SetAnnotations(annotations)
	return u
}

func readAny[T any](outcomes []Outcome[T]) bool {
	for _, oc := range outcomes {
		if oc.Err == nil {
			return true
		}
	}
	return false
}

func multipleKinds(merged []Merged) bool {
	for _, m := range merged {
		if m.Mapping.GroupVersionKind.GroupKind() != merged[0].Mapping.GroupVersionKind.GroupKind() {
			return true
		}
	}
	return false
}

// trackingWriter counts what was written.
type trackingWriter struct {
	w       io.Writer
	written int
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	t.written += len(p)
	return t.w.Write(p)
}

// separatorWriter writes a blank line before the next non-empty write once
// ready: between the tables of two resources.
type separatorWriter struct {
	w     io.Writer
	ready bool
}

func (s *separatorWriter) Write(p []byte) (int, error) {
	if len(p) > 0 && s.ready {
		if _, err := fmt.Fprintln(s.w); err != nil {
			return 0, err
		}
		s.ready = false
	}
	return s.w.Write(p)
}
