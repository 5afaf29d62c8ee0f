package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	kubectlapply "k8s.io/kubectl/pkg/cmd/apply"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/cli/policy"
)

// Flag names, karmadactl's.
const (
	// AllClustersFlag propagates the objects to every member.
	AllClustersFlag = "all-clusters"
	// ClusterFlag (shorthand -C) propagates the objects to the members named.
	ClusterFlag = "cluster"
)

// Flags are kubectl apply's flags and karmadactl's --all-clusters and
// -C/--cluster.
type Flags struct {
	Kubectl *kubectlapply.ApplyFlags
	// AllClusters is --all-clusters.
	AllClusters bool
	// Clusters is -C/--cluster, comma-separated or repeated.
	Clusters []string
	// IgnoreExisting is --dry-run-ignore-existing: a placement dry run of
	// the manifests alone, without the control plane's own policies and
	// templates.
	IgnoreExisting bool
}

// NewFlags returns the flags with kubectl's defaults.
func NewFlags(streams genericiooptions.IOStreams) *Flags {
	return &Flags{Kubectl: kubectlapply.NewApplyFlags(streams)}
}

// AddFlags adds the flags to cmd. -C/--cluster takes the place of the
// root command's --cluster (the kubeconfig cluster), as in karmadactl.
func (f *Flags) AddFlags(cmd *cobra.Command) {
	f.Kubectl.AddFlags(cmd)
	fs := cmd.Flags()
	fs.BoolVar(&f.AllClusters, AllClustersFlag, false, "If present, propagates a group of resources to all member clusters.")
	fs.StringSliceVarP(&f.Clusters, ClusterFlag, "C", nil, "If present, propagates a group of resources to specified clusters.")
	if d := fs.Lookup(dryRunFlag); d != nil {
		d.Usage = `Must be "none", "server", "client" or "placement". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource. If placement, print where each resource template would be propagated (clusters, replicas, overrides) by the control plane's own policy choice, scheduling and overrides, writing nothing.`
	}
	fs.BoolVar(&f.IgnoreExisting, "dry-run-ignore-existing", false, "With --dry-run=placement, review the manifests alone: without the control plane's own policies, override policies and templates.")
}

// Options is a validated apply.
type Options struct {
	kubectl *kubectlapply.ApplyOptions
	factory cmdutil.Factory
	// propagate says a policy goes with each object; clusters are the
	// members it names, none for every member.
	propagate bool
	clusters  []string
}

// ToOptions validates the flags: kubectl's, and karmadactl's rules for
// --all-clusters and -C, whose clusters must exist in the control plane
// (karmada lists them). baseName is the command line's name.
func (f *Flags) ToOptions(ctx context.Context, factory cmdutil.Factory, karmada versioned.Interface, cmd *cobra.Command, baseName string, args []string) (*Options, error) {
	clusters := Clusters(f.Clusters)
	if err := ValidateTargets(f.AllClusters, clusters, nil); err != nil {
		return nil, err
	}
	if len(clusters) > 0 {
		list, err := karmada.ClusterV1alpha1().Clusters().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing the member clusters: %w", err)
		}
		known := make([]string, 0, len(list.Items))
		for _, c := range list.Items {
			known = append(known, c.Name)
		}
		if err := ValidateTargets(f.AllClusters, clusters, known); err != nil {
			return nil, err
		}
	}
	kubectl, err := f.Kubectl.ToOptions(factory, cmd, baseName, args)
	if err != nil {
		return nil, err
	}
	if err := kubectl.Validate(); err != nil {
		return nil, err
	}
	return &Options{kubectl: kubectl, factory: factory, propagate: f.AllClusters || len(clusters) > 0, clusters: clusters}, nil
}

// Run applies what the command line asks (cmd, args; baseName is the
// command line's name) to the control plane flags locates.
func (f *Flags) Run(ctx context.Context, flags genericclioptions.RESTClientGetter, cmd *cobra.Command, baseName string, args []string) error {
	if placementDryRun(cmd) {
		return f.reviewPlacement(ctx, flags, cmd)
	}
	cp, err := controlplane.ClientsOf(flags)
	if err != nil {
		return err
	}
	o, err := f.ToOptions(ctx, cmdutil.NewFactory(flags), cp.Karmada, cmd, baseName, args)
	if err != nil {
		return err
	}
	return o.Run()
}

// Clusters returns the names of -C, trimmed, without empty ones.
func Clusters(flag []string) []string {
	var out []string
	for _, c := range flag {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// ValidateTargets checks --all-clusters and -C as karmadactl does: not
// both, and every cluster named is one of known (when known is not nil),
// with one error per unknown cluster.
func ValidateTargets(allClusters bool, clusters, known []string) error {
	if allClusters && len(clusters) > 0 {
		return errors.New("--all-clusters and --cluster cannot be used together")
	}
	if known == nil {
		return nil
	}
	have := make(map[string]bool, len(known))
	for _, k := range known {
		have[k] = true
	}
	var errs []error
	for _, c := range clusters {
		if !have[c] {
			errs = append(errs, fmt.Errorf("cluster %s does not exist", c))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// Run applies the objects, each followed by its policy when the objects
// are propagated.
func (o *Options) Run() error {
	if o.propagate {
		infos, err := o.kubectl.GetObjects()
		if err != nil {
			return err
		}
		withPolicies, err := WithPolicies(infos, o.clusters, o.policyInfo)
		if err != nil {
			return err
		}
		o.kubectl.SetObjects(withPolicies)
	}
	return o.kubectl.Run()
}

// policyInfo is the resource.Info kubectl applies obj (a policy) with.
func (o *Options) policyInfo(obj *unstructured.Unstructured) (*resource.Info, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := o.kubectl.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("unable to recognize resource: %w", err)
	}
	client, err := o.factory.UnstructuredClientForMapping(mapping)
	if err != nil {
		return nil, fmt.Errorf("unable to connect to a server to handle %q: %w", mapping.Resource, err)
	}
	return &resource.Info{Namespace: obj.GetNamespace(), Name: obj.GetName(), Object: obj, Mapping: mapping, Client: client}, nil
}

// WithPolicies returns infos with, after each, the policy placing it on
// clusters (every member when empty), as info returns it for applying.
func WithPolicies(infos []*resource.Info, clusters []string, info func(policy *unstructured.Unstructured) (*resource.Info, error)) ([]*resource.Info, error) {
	out := make([]*resource.Info, 0, 2*len(infos))
	for _, i := range infos {
		if i.Mapping == nil {
			return nil, fmt.Errorf("%s/%s: its kind is unknown to the control plane", i.Namespace, i.Name)
		}
		p, err := PolicyFor(i.Mapping, i.Namespace, i.Name, clusters)
		if err != nil {
			return nil, err
		}
		pi, err := info(p)
		if err != nil {
			return nil, err
		}
		out = append(out, i, pi)
	}
	return out, nil
}

// PolicyFor returns, as an unstructured object, the policy placing the
// object namespace/name of mapping's kind on clusters (every member when
// empty): a PropagationPolicy, or a ClusterPropagationPolicy for a
// cluster-scoped kind.
func PolicyFor(mapping *meta.RESTMapping, namespace, name string, clusters []string) (*unstructured.Unstructured, error) {
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	p := policy.For(policy.Target{GVK: mapping.GroupVersionKind, Namespace: namespace, Name: name, Namespaced: namespaced}, clusters)
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the policy of %s %s: %w", mapping.GroupVersionKind.Kind, name, err)
	}
	return &unstructured.Unstructured{Object: content}, nil
}
