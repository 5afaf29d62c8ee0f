package interpret

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	configinstall "github.com/flotilla-io/flotilla/apis/config/install"
	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	configvalidation "github.com/flotilla-io/flotilla/apis/config/validation"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/interpreter/lua"
)

// interpretOperations are the operations a ResourceInterpreterCustomization
// can define, in the order help and errors list them.
var interpretOperations = []interpreter.Operation{
	interpreter.InterpretReplica,
	interpreter.InterpretComponent,
	interpreter.ReviseReplica,
	interpreter.Retain,
	interpreter.AggregateStatus,
	interpreter.InterpretStatus,
	interpreter.InterpretHealth,
	interpreter.InterpretDependency,
}

// Output formats of interpret (-o).
const (
	OutputYAML = "yaml"
	OutputJSON = "json"
)

// Options holds the flags of interpret.
type Options struct {
	Customization  string
	Operation      string
	DesiredFile    string
	ObservedFile   string
	StatusFile     string
	DesiredReplica int32
	Output         string
	Check          bool
	ShowDoc        bool
	// Edit is karmadactl's --edit, which is not offered: given, it is an error.
	Edit bool
	// ReplicaSet says whether --desired-replica was given.
	ReplicaSet bool
	// Blocks prints karmadactl's blocks (no -o given).
	Blocks bool

	// op is Operation, parsed.
	op interpreter.Operation
}

// NewOptions returns interpret's defaults.
func NewOptions() *Options { return &Options{Output: OutputYAML} }

// Run does what the flags ask: the report of --check, the rules' docs
// (--show-doc), or the operation's result, printed on out.
func (o *Options) Run(out io.Writer) error {
	switch {
	case o.Edit:
		return errors.New("--edit (karmadactl's editor of customizations) is not offered: edit the file, then check it with --check")
	case o.ShowDoc:
		return showDocs(out)
	case o.Check:
		if o.Customization == "" {
			return errors.New("-f/--filename is required")
		}
		return runCheck(o.Customization, out)
	}
	if err := o.complete(); err != nil {
		return err
	}
	return o.run(out)
}

// Operations lists the operations a customization can define, joined by sep.
func Operations(sep string) string {
	names := make([]string, len(interpretOperations))
	for i, op := range interpretOperations {
		names[i] = string(op)
	}
	return strings.Join(names, sep)
}

// parseOperation returns the operation called name, ignoring case.
func parseOperation(name string) (interpreter.Operation, error) {
	for _, op := range interpretOperations {
		if strings.EqualFold(name, string(op)) {
			return op, nil
		}
	}
	return "", fmt.Errorf("unknown operation %q: want one of %s", name, Operations(", "))
}

// complete parses the operation and checks that the files it needs are given.
func (o *Options) complete() error {
	if o.Customization == "" {
		return errors.New("--customization is required")
	}
	if o.Operation == "" {
		return fmt.Errorf("--operation is required: one of %s", Operations(", "))
	}
	op, err := parseOperation(o.Operation)
	if err != nil {
		return err
	}
	o.op = op
	switch {
	case o.op == interpreter.InterpretStatus || o.op == interpreter.InterpretHealth:
		if o.DesiredFile == "" && o.ObservedFile == "" {
			return fmt.Errorf("--observed-file or --desired-file is required for %s", o.op)
		}
	case o.DesiredFile == "":
		return fmt.Errorf("--desired-file is required for %s", o.op)
	}
	if o.op == interpreter.Retain && o.ObservedFile == "" {
		return fmt.Errorf("--observed-file is required for %s", o.op)
	}
	if o.op == interpreter.ReviseReplica {
		if !o.ReplicaSet {
			return fmt.Errorf("--desired-replica is required for %s", o.op)
		}
		if o.DesiredReplica < 0 {
			return fmt.Errorf("--desired-replica must not be negative, got %d", o.DesiredReplica)
		}
	}
	o.Output = strings.ToLower(o.Output)
	if o.Output != OutputYAML && o.Output != OutputJSON {
		return fmt.Errorf("unknown output format %q: want yaml or json", o.Output)
	}
	return nil
}

// run loads the customizations and objects, runs the operation and prints
// its result to out.
func (o *Options) run(out io.Writer) error {
	rics, err := readCustomizations(o.Customization)
	if err != nil {
		return err
	}
	var desired, observed *unstructured.Unstructured
	if o.DesiredFile != "" {
		if desired, err = readObject(o.DesiredFile); err != nil {
			return err
		}
	}
	if o.ObservedFile != "" {
		if observed, err = readObject(o.ObservedFile); err != nil {
			return err
		}
	}
	var items []workv1alpha2.AggregatedStatusItem
	if o.op == interpreter.AggregateStatus && o.StatusFile != "" {
		if items, err = readStatusItems(o.StatusFile); err != nil {
			return err
		}
	}

	// The object the operation interprets, and so whose kind must be targeted.
	subject, what := desired, "the desired object"
	switch o.op {
	case interpreter.InterpretStatus, interpreter.InterpretHealth:
		if observed != nil {
			subject, what = observed, "the observed object"
		}
	case interpreter.Retain:
		if dg, og := desired.GroupVersionKind(), observed.GroupVersionKind(); dg != og {
			return fmt.Errorf("%s needs objects of one kind: the desired object is %s, the observed object %s", o.op, describeGVK(dg), describeGVK(og))
		}
	}

	c := lua.NewCustomizations()
	for _, ric := range rics {
		if err := c.Set(ric); err != nil {
			return fmt.Errorf("%s: %w", o.Customization, err)
		}
	}
	if err := checkHook(c, rics, subject.GroupVersionKind(), o.op, what); err != nil {
		return fmt.Errorf("%s: %w", o.Customization, err)
	}

	result, err := interpret(c, o.op, subject, observed, items, int64(o.DesiredReplica))
	if err != nil {
		return fmt.Errorf("%s of %s: %w", o.op, describeObject(subject), err)
	}
	if o.Blocks {
		return printBlocks(out, namedResults(o.op, result))
	}
	return printResult(out, o.Output, result)
}

// checkHook tells why c cannot run op on objects of kind gvk: no
// customization targets the kind, or the ones that do leave op undefined.
func checkHook(c *lua.Customizations, rics []*configv1alpha1.ResourceInterpreterCustomization, gvk schema.GroupVersionKind, op interpreter.Operation, what string) error {
	if c.HookEnabled(gvk, op) {
		return nil
	}
	var targets, names []string
	for _, ric := range rics {
		t := schema.FromAPIVersionAndKind(ric.Spec.Target.APIVersion, ric.Spec.Target.Kind)
		if t == gvk {
			names = append(names, ric.Name)
		} else {
			targets = append(targets, fmt.Sprintf("%s (%s)", describeGVK(t), ric.Name))
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("no customization targets %s, the kind of %s; the customizations target %s",
			describeGVK(gvk), what, strings.Join(targets, ", "))
	}
	field := ""
	for _, s := range (&configv1alpha1.CustomizationRules{}).Scripts() {
		if interpreter.Operation(s.Operation) == op {
			field = fmt.Sprintf(" (spec.customizations.%s, function %s)", s.Field, s.Function)
		}
	}
	return fmt.Errorf("the customization of %s (%s) does not define %s%s", describeGVK(gvk), strings.Join(names, ", "), op, field)
}

// replicaResult is what InterpretReplica prints.
type replicaResult struct {
	Replicas int32                             `json:"replicas"`
	Requires *workv1alpha2.ReplicaRequirements `json:"requires"`
}

// healthResult is what InterpretHealth prints.
type healthResult struct {
	Healthy bool `json:"healthy"`
}

// interpret runs op on obj and returns the value to print. The caller has
// checked that the files op needs were read and that c defines op.
func interpret(c *lua.Customizations, op interpreter.Operation, obj, observed *unstructured.Unstructured,
	items []workv1alpha2.AggregatedStatusItem, replicas int64) (any, error) {
	switch op {
	case interpreter.InterpretReplica:
		n, req, err := c.GetReplicas(obj)
		if err != nil {
			return nil, err
		}
		return replicaResult{Replicas: n, Requires: req}, nil
	case interpreter.InterpretComponent:
		components, err := c.GetComponents(obj)
		if components == nil {
			components = []workv1alpha2.Component{}
		}
		return components, err
	case interpreter.ReviseReplica:
		return objectOrError(c.ReviseReplica(obj, replicas))
	case interpreter.Retain:
		return objectOrError(c.Retain(obj, observed))
	case interpreter.AggregateStatus:
		return objectOrError(c.AggregateStatus(obj, items))
	case interpreter.InterpretStatus:
		status, err := c.ReflectStatus(obj)
		if err != nil || status == nil {
			return nil, err
		}
		return json.RawMessage(status.Raw), nil
	case interpreter.InterpretHealth:
		health, err := c.InterpretHealth(obj)
		if err != nil {
			return nil, err
		}
		return healthResult{Healthy: health == workv1alpha2.ResourceHealthy}, nil
	case interpreter.InterpretDependency:
		deps, err := c.GetDependencies(obj)
		if deps == nil {
			deps = []interpreter.DependentObjectReference{}
		}
		return deps, err
	}
	return nil, fmt.Errorf("unknown operation %q", op)
}

// objectOrError returns the content of u, which is what is printed of an
// object, or err.
func objectOrError(u *unstructured.Unstructured, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return u.Object, nil
}

// printResult writes v as YAML or JSON.
func printResult(out io.Writer, format string, v any) error {
	var data []byte
	var err error
	if format == OutputJSON {
		data, err = json.MarshalIndent(v, "", "  ")
		data = append(data, '\n')
	} else {
		data, err = yaml.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("encoding the result: %w", err)
	}
	_, err = out.Write(data)
	return err
}

// readCustomizations reads the ResourceInterpreterCustomizations of path and
// validates them as admission does, which also rejects two customizations
// defining the same operation for one kind.
func readCustomizations(path string) ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	configinstall.Install(scheme)
	decoder := jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory, scheme, scheme, jsonserializer.SerializerOptions{Strict: true})
	want := configv1alpha1.SchemeGroupVersion.WithKind("ResourceInterpreterCustomization")
	seen := map[string]bool{}
	rics := make([]*configv1alpha1.ResourceInterpreterCustomization, 0, len(docs))
	for _, d := range docs {
		// The kind first: decoding another kind strictly would only say
		// that its fields are unknown.
		var tm metav1.TypeMeta
		if err := json.Unmarshal(d.json, &tm); err != nil {
			return nil, fmt.Errorf("%s: want a ResourceInterpreterCustomization: %w", d.name, err)
		}
		if got := tm.GroupVersionKind(); got != want {
			return nil, fmt.Errorf("%s: got apiVersion %q kind %q, want a %s", d.name, tm.APIVersion, tm.Kind, describeGVK(want))
		}
		// Strict as the API server is: field names are case-sensitive,
		// unknown and duplicate fields are errors.
		ric := &configv1alpha1.ResourceInterpreterCustomization{}
		if _, _, err := decoder.Decode(d.json, nil, ric); err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		// Admission, as if the file were applied in order.
		errs := configvalidation.ValidateResourceInterpreterCustomization(ric)
		errs = append(errs, configvalidation.ValidateNoDuplicateOperations(ric, rics)...)
		if len(errs) > 0 {
			return nil, fmt.Errorf("%s: invalid ResourceInterpreterCustomization %q: %w", d.name, ric.Name, errs.ToAggregate())
		}
		if seen[ric.Name] {
			return nil, fmt.Errorf("%s: a second ResourceInterpreterCustomization is called %q", d.name, ric.Name)
		}
		seen[ric.Name] = true
		rics = append(rics, ric)
	}
	return rics, nil
}

// readObject reads the one object of path; it must have an apiVersion and
// a kind, which select the customization.
func readObject(path string) (*unstructured.Unstructured, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	if len(docs) > 1 {
		return nil, fmt.Errorf("%s: holds %d documents, want one object", path, len(docs))
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(docs[0].json, &obj); err != nil {
		return nil, fmt.Errorf("%s: want an object: %w", docs[0].name, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	if apiVersion, kind := u.GetAPIVersion(), u.GetKind(); apiVersion == "" || kind == "" {
		return nil, fmt.Errorf("%s: the object needs an apiVersion and a kind, got %q and %q", path, apiVersion, kind)
	}
	return u, nil
}

// readStatusItems reads AggregatedStatusItems: each document of path is a
// list of items or one item.
func readStatusItems(path string) ([]workv1alpha2.AggregatedStatusItem, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	var items []workv1alpha2.AggregatedStatusItem
	for _, d := range docs {
		if d.json[0] == '[' {
			var list []workv1alpha2.AggregatedStatusItem
			if err := yaml.UnmarshalStrict(d.json, &list); err != nil {
				return nil, fmt.Errorf("%s: reading the AggregatedStatusItems: %w", d.name, err)
			}
			items = append(items, list...)
			continue
		}
		var item workv1alpha2.AggregatedStatusItem
		if err := yaml.UnmarshalStrict(d.json, &item); err != nil {
			return nil, fmt.Errorf("%s: reading an AggregatedStatusItem: %w", d.name, err)
		}
		items = append(items, item)
	}
	return items, nil
}

// document is one YAML or JSON document of a file, as JSON.
type document struct {
	// name is the file, and the document's index when the file holds several.
	name string
	json []byte
}

// readDocuments reads the non-empty YAML or JSON documents of path.
func readDocuments(path string) ([]document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []document
	for i := 1; ; i++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		if j = bytes.TrimSpace(j); len(j) == 0 || bytes.Equal(j, []byte("null")) {
			continue
		}
		docs = append(docs, document{name: fmt.Sprintf("%s (document %d)", path, i), json: j})
	}
	switch len(docs) {
	case 0:
		return nil, fmt.Errorf("%s: no YAML or JSON document", path)
	case 1:
		docs[0].name = path
	}
	return docs, nil
}

// describeGVK writes gvk as it appears in a manifest.
func describeGVK(gvk schema.GroupVersionKind) string {
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	return fmt.Sprintf("%s %s", apiVersion, kind)
}

// describeObject writes the apiVersion, kind, namespace and name of obj.
func describeObject(obj *unstructured.Unstructured) string {
	s := describeGVK(obj.GroupVersionKind())
	if ns := obj.GetNamespace(); ns != "" {
		s += " " + ns + "/" + obj.GetName()
	} else if name := obj.GetName(); name != "" {
		s += " " + name
	}
	return s
}
