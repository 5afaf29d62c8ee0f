package rollout

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/rest"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	flotillaclient "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/cli/promote"
	"github.com/flotilla-io/flotilla/names"
)

// Clients reach the control plane.
type Clients struct {
	// Flotilla reads runs and revisions and writes runs' spec.
	Flotilla versioned.Interface
	// Dynamic reads and writes the template.
	Dynamic dynamic.Interface
	// Mapper maps a kubectl resource argument to the template's kind.
	Mapper meta.RESTMapper
	// Reviews tells who the caller is (the approver); nil: nobody.
	Reviews authenticationv1client.SelfSubjectReviewsGetter
}

// NewClients builds the clients of the control plane cp locates.
func NewClients(cp genericclioptions.RESTClientGetter) (Clients, error) {
	cfg, err := cp.ToRESTConfig()
	if err != nil {
		return Clients{}, fmt.Errorf("loading the control-plane kubeconfig: %w", err)
	}
	mapper, err := cp.ToRESTMapper()
	if err != nil {
		return Clients{}, err
	}
	cpc, err := controlplane.NewClients(cfg)
	if err != nil {
		return Clients{}, err
	}
	dyn, err := dynamic.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cfg), controlplane.UserAgent))
	if err != nil {
		return Clients{}, fmt.Errorf("building the dynamic client for %s: %w", cfg.Host, err)
	}
	return Clients{Flotilla: cpc.Karmada, Dynamic: dyn, Mapper: mapper, Reviews: cpc.Kube.AuthenticationV1()}, nil
}

// Command is one rollout command on one template.
type Command struct {
	Clients
	// Target is the template.
	Target Target
	// Self is how the user runs this binary ("flotillactl", "kubectl
	// flotilla"), for the commands the output suggests.
	Self string
	// Out receives what the command prints.
	Out io.Writer
	// Now is the clock of approvals; nil: time.Now.
	Now func() time.Time
}

// New resolves args (TYPE/NAME or TYPE NAME) in the namespace of cp and
// returns the command on that template.
func New(cp genericclioptions.RESTClientGetter, self string, args []string, out io.Writer) (*Command, error) {
	namespace, _, err := cp.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("failed to get namespace from the kubeconfig: %w", err)
	}
	clients, err := NewClients(cp)
	if err != nil {
		return nil, err
	}
	target, err := Resolve(clients.Mapper, args, namespace)
	if err != nil {
		return nil, err
	}
	return &Command{Clients: clients, Target: target, Self: self, Out: out}, nil
}

// Target is a resource template and where its rollout objects live.
type Target struct {
	// Mapping is the template's kind and resource.
	Mapping *meta.RESTMapping
	// Namespace is the template's namespace; empty when cluster-scoped.
	Namespace string
	// Name is the template's name.
	Name string
}

// Resolve maps args (TYPE/NAME, or TYPE NAME, as kubectl rollout takes
// them) to a template; namespace is used when the kind is namespaced.
func Resolve(mapper meta.RESTMapper, args []string, namespace string) (Target, error) {
	var kind, name string
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		kind, name, _ = strings.Cut(args[0], "/")
	case len(args) == 2 && !strings.Contains(args[0], "/"):
		kind, name = args[0], args[1]
	default:
		return Target{}, fmt.Errorf("expected one resource as TYPE/NAME or TYPE NAME (deployment/nginx), got %q", strings.Join(args, " "))
	}
	if kind == "" || name == "" || strings.Contains(name, "/") {
		return Target{}, fmt.Errorf("expected one resource as TYPE/NAME (deployment/nginx), got %q", strings.Join(args, " "))
	}
	m, err := promote.MappingFor(mapper, kind, "the control plane")
	if err != nil {
		return Target{}, err
	}
	t := Target{Mapping: m, Name: name}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		t.Namespace = namespace
	}
	return t, nil
}

// Ref is the template as the command line names it: deployment/nginx.
func (t Target) Ref() string {
	return strings.ToLower(t.Mapping.GroupVersionKind.Kind) + "/" + t.Name
}

// String is the template as kubectl prints it: deployment.apps/nginx.
func (t Target) String() string {
	gk := t.Mapping.GroupVersionKind.GroupKind()
	kind := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		kind += "." + gk.Group
	}
	return kind + "/" + t.Name
}

// Binding is the name of the template's (Cluster)ResourceBinding.
func (t Target) Binding() string {
	return names.BindingName(t.Mapping.GroupVersionKind.Kind, t.Name)
}

// RolloutNamespace is where the template's runs and revisions live: its
// own namespace, or karmada-system for a cluster-scoped template.
func (t Target) RolloutNamespace() string {
	return names.RolloutNamespace(t.Namespace)
}

// template reads the template.
func (c *Command) template(ctx context.Context) (*unstructured.Unstructured, error) {
	return c.resource().Get(ctx, c.Target.Name, metav1.GetOptions{})
}

func (c *Command) resource() dynamic.ResourceInterface {
	r := c.Dynamic.Resource(c.Target.Mapping.Resource)
	if c.Target.Namespace == "" {
		return r
	}
	return r.Namespace(c.Target.Namespace)
}

func (c *Command) runs(namespace string) flotillaclient.RolloutRunInterface {
	return c.Flotilla.FlotillaV1alpha1().RolloutRuns(namespace)
}

func (c *Command) bindingSelector() string {
	return labels.SelectorFromSet(labels.Set{flotillav1alpha1.BindingLabel: c.Target.Binding()}).String()
}

// activeRun returns the template's active run, nil if none was started;
// the template must exist.
func (c *Command) activeRun(ctx context.Context) (*flotillav1alpha1.RolloutRun, error) {
	if _, err := c.template(ctx); err != nil {
		return nil, err
	}
	list, err := c.runs(c.Target.RolloutNamespace()).List(ctx, metav1.ListOptions{LabelSelector: c.bindingSelector()})
	if err != nil {
		return nil, fmt.Errorf("listing the rollouts of %s: %w", c.Target.Ref(), err)
	}
	return ActiveRun(list.Items), nil
}

// mustActiveRun is activeRun, with an error when there is none.
func (c *Command) mustActiveRun(ctx context.Context) (*flotillav1alpha1.RolloutRun, error) {
	run, err := c.activeRun(ctx)
	if err == nil && run == nil {
		err = fmt.Errorf("no rollout was started for %s", c.Target.Ref())
	}
	return run, err
}

// ActiveRun returns the newest of runs: the latest created, then the one
// with the larger revision number (the suffix of <binding>-<revision>);
// nil if runs is empty.
func ActiveRun(runs []flotillav1alpha1.RolloutRun) *flotillav1alpha1.RolloutRun {
	if len(runs) == 0 {
		return nil
	}
	newest := slices.MaxFunc(runs, func(a, b flotillav1alpha1.RolloutRun) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		if c := cmp.Compare(runNumber(a.Name), runNumber(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return &newest
}

// runNumber is the revision number a run's name ends with, -1 if none.
func runNumber(name string) int64 {
	i := strings.LastIndexByte(name, '-')
	n, err := strconv.ParseInt(name[i+1:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// hint is the command line of a rollout verb on the template.
func (c *Command) hint(verb string, extra ...string) string {
	parts := []string{c.Self, "rollout", verb, c.Target.Ref()}
	if c.Target.Namespace != "" && c.Target.Namespace != metav1.NamespaceDefault {
		parts = append(parts, "-n", c.Target.Namespace)
	}
	return strings.Join(append(parts, extra...), " ")
}

func (c *Command) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}
