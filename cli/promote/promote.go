package promote

import (
	"context"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/interpreter"
)

// Output formats of -o, karmadactl's.
const (
	OutputYAML = "yaml"
	OutputJSON = "json"
)

// Options are what one promote does.
type Options struct {
	// Kind and Name are the arguments: a kubectl resource argument and
	// the object's name.
	Kind, Name string
	// Namespace is the object's namespace; a cluster-scoped kind ignores it.
	Namespace string
	// Cluster is -C/--cluster: the member the object runs in, which the
	// policy places the template on.
	Cluster string
	// Output is -o: yaml or json prints the templates and the policy
	// instead of creating them.
	Output string
	// DryRun reads and checks everything and creates nothing.
	DryRun bool
	// Dependencies is -d: the object's dependencies are promoted too.
	Dependencies bool
}

// Validate checks the options as karmadactl does.
func (o Options) Validate() error {
	if o.Cluster == "" {
		return errors.New("the cluster cannot be empty: -C/--cluster is required (the member cluster the object runs in)")
	}
	if o.Kind == "" || o.Name == "" {
		return errors.New("incorrect command format, please use correct command format: promote <RESOURCE_TYPE> <RESOURCE_NAME> -n <NAME_SPACE> -C <CLUSTER_NAME>")
	}
	if o.Output != "" && o.Output != OutputYAML && o.Output != OutputJSON {
		return errors.New("output format is only one of json and yaml")
	}
	return nil
}

// Reader reads the objects to promote from the member (Member).
type Reader interface {
	Get(ctx context.Context, kind, namespace, name string) (*unstructured.Unstructured, error)
	Dependency(ctx context.Context, ref interpreter.DependentObjectReference) ([]*unstructured.Unstructured, error)
}

// ControlPlane is where the templates and policies are created.
type ControlPlane struct {
	Mapper meta.RESTMapper
	Client dynamic.Interface
}

// Promoter promotes objects from a member to the control plane.
type Promoter struct {
	Member       Reader
	ControlPlane ControlPlane
	// Dependencies lists an object's dependencies; needed with -d only.
	Dependencies func(obj *unstructured.Unstructured) ([]interpreter.DependentObjectReference, error)
	// Out receives karmadactl's lines (or -o's objects), ErrOut the
	// progress of a promote of several objects and warnings.
	Out, ErrOut io.Writer
}

// created is an object this run created, for the rollback.
type created struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// Run promotes as o says: reads the object (and its dependencies) from
// the member, then prints them (-o) or creates them in the control plane,
// dependencies first, then the object's template and its policy. An
// object the control plane already has is left as it is, with
// karmadactl's line; when it is o's object itself, nothing is promoted.
// On a failure, what this run created is deleted again.
func (p *Promoter) Run(ctx context.Context, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	obj, err := p.Member.Get(ctx, o.Kind, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	var deps []*unstructured.Unstructured
	if o.Dependencies {
		if deps, err = p.readDependencies(ctx, obj, o.Cluster); err != nil {
			return err
		}
	}
	items, err := Plan(obj, deps, o.Cluster, o.Dependencies)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printItems(p.Out, o.Output, items)
	}
	return p.create(ctx, items, o.DryRun)
}

// readDependencies reads the dependencies of obj from the member; one
// that does not exist there is left out with a warning (a pod may name an
// optional ConfigMap).
func (p *Promoter) readDependencies(ctx context.Context, obj *unstructured.Unstructured, cluster string) ([]*unstructured.Unstructured, error) {
	refs, err := p.Dependencies(obj)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, ref := range refs {
		objs, err := p.Member.Dependency(ctx, ref)
		if err != nil {
			return nil, err
		}
		if len(objs) == 0 {
			fmt.Fprintf(p.ErrOut, "Warning: %s %s, a dependency of %s %s, does not exist in cluster(%s): not promoted\n",
				ref.Kind, cache.NewObjectName(ref.Namespace, ref.Name).String(), obj.GetKind(), cache.NewObjectName(obj.GetNamespace(), obj.GetName()).String(), cluster)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// create creates the items in the control plane, or with dryRun only
// checks them.
func (p *Promoter) create(ctx context.Context, items []Item, dryRun bool) (err error) {
	var done []created
	defer func() {
		if err != nil && len(done) > 0 {
			err = p.rollback(done, err)
		}
	}()
	main := items[len(items)-1]
	mainGVR, exists, err := p.exists(ctx, main.Template)
	if err != nil {
		return err
	}
	if exists {
		fmt.Fprintf(p.Out, "%s already exist in karmada control plane, you can edit PropagationPolicy and OverridePolicy to propagate it\n", resourceName(mainGVR, main.Template))
		return nil
	}
	for i, it := range items {
		if len(items) > 1 {
			fmt.Fprintf(p.ErrOut, "[%d/%d] Promoting %s %s\n", i+1, len(items), it.Template.GetKind(), cache.NewObjectName(it.Template.GetNamespace(), it.Template.GetName()).String())
		}
		gvr, exists := mainGVR, false // the main object was looked up above
		if i < len(items)-1 {
			if gvr, exists, err = p.exists(ctx, it.Template); err != nil {
				return err
			}
		}
		if exists {
			fmt.Fprintf(p.Out, "%s already exist in karmada control plane, you can edit PropagationPolicy and OverridePolicy to propagate it\n", resourceName(gvr, it.Template))
			continue
		}
		var policy *unstructured.Unstructured
		var policyGVR schema.GroupVersionResource
		if it.Policy != nil {
			if policy, err = toUnstructured(it.Policy); err != nil {
				return err
			}
			var pexists bool
			if policyGVR, pexists, err = p.exists(ctx, policy); err != nil {
				return err
			}
			if pexists {
				return fmt.Errorf("the %s(%s) already exist, please edit it to propagate resource", policy.GetKind(), cache.NewObjectName(policy.GetNamespace(), policy.GetName()).String())
			}
		}
		if dryRun {
			fmt.Fprintf(p.Out, "%s is promoted successfully (dry run)\n", resourceName(gvr, it.Template))
			continue
		}
		if err := p.createOne(ctx, gvr, it.Template); err != nil {
			return err
		}
		done = append(done, created{gvr: gvr, namespace: it.Template.GetNamespace(), name: it.Template.GetName()})
		if policy != nil {
			if err := p.createOne(ctx, policyGVR, policy); err != nil {
				return err
			}
			done = append(done, created{gvr: policyGVR, namespace: policy.GetNamespace(), name: policy.GetName()})
		}
		fmt.Fprintf(p.Out, "%s is promoted successfully\n", resourceName(gvr, it.Template))
	}
	return nil
}

// exists maps obj's kind to its resource in the control plane and tells
// whether the control plane has obj.
func (p *Promoter) exists(ctx context.Context, obj *unstructured.Unstructured) (schema.GroupVersionResource, bool, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := p.ControlPlane.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionResource{}, false, fmt.Errorf("the control plane does not serve %s: install its CustomResourceDefinition there first", gvk)
	}
	if err != nil {
		return schema.GroupVersionResource{}, false, err
	}
	_, err = p.ControlPlane.Client.Resource(mapping.Resource).Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	switch {
	case err == nil:
		return mapping.Resource, true, nil
	case apierrors.IsNotFound(err):
		return mapping.Resource, false, nil
	default:
		return mapping.Resource, false, fmt.Errorf("failed to get resource %q(%s) in control plane: %w", mapping.Resource.String(), cache.NewObjectName(obj.GetNamespace(), obj.GetName()).String(), err)
	}
}

func (p *Promoter) createOne(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	_, err := p.ControlPlane.Client.Resource(gvr).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{})
	if err == nil {
		return nil
	}
	if ns := obj.GetNamespace(); ns != "" && apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to create resource %q(%s) in control plane: namespace %q does not exist there; create it first: %w", gvr.String(), cache.NewObjectName(ns, obj.GetName()).String(), ns, err)
	}
	return fmt.Errorf("failed to create resource %q(%s) in control plane: %w", gvr.String(), cache.NewObjectName(obj.GetNamespace(), obj.GetName()).String(), err)
}

// rollback deletes what this run created, the last first, and returns
// cause with what could not be deleted.
func (p *Promoter) rollback(done []created, cause error) error {
	// The run's context may be what failed.
	ctx := context.Background()
	errs := []error{cause}
	for i := len(done) - 1; i >= 0; i-- {
		c := done[i]
		err := p.ControlPlane.Client.Resource(c.gvr).Namespace(c.namespace).Delete(ctx, c.name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("rolling back %q(%s): %w", c.gvr.String(), cache.NewObjectName(c.namespace, c.name).String(), err))
			continue
		}
		fmt.Fprintf(p.ErrOut, "Rolled back: deleted %q(%s) from the control plane\n", c.gvr.String(), cache.NewObjectName(c.namespace, c.name).String())
	}
	return errors.Join(errs...)
}

// resourceName is how karmadactl names a promoted object in its lines:
// Resource "apps/v1, Resource=deployments"(default/nginx).
func resourceName(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) string {
	return fmt.Sprintf("Resource %q(%s)", gvr.String(), cache.NewObjectName(obj.GetNamespace(), obj.GetName()).String())
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: content}, nil
}

// printItems prints the templates and the policy, as -o yaml|json does.
func printItems(out io.Writer, format string, items []Item) error {
	var printer printers.ResourcePrinter = &printers.YAMLPrinter{}
	if format == OutputJSON {
		printer = &printers.JSONPrinter{}
	}
	for _, it := range items {
		if err := printer.PrintObj(it.Template, out); err != nil {
			return fmt.Errorf("failed to print the resource template: %w", err)
		}
		if it.Policy == nil {
			continue
		}
		policy, err := toUnstructured(it.Policy)
		if err != nil {
			return err
		}
		if err := printer.PrintObj(policy, out); err != nil {
			return fmt.Errorf("failed to print the %s: %w", policy.GetKind(), err)
		}
	}
	return nil
}
