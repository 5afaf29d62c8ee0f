package webhook

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	configlisters "github.com/flotilla-io/flotilla/apis/generated/listers/config/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
)

// Options configures an Interpreter. The zero value is valid.
type Options struct {
	// ServiceResolver turns a webhook's Service reference into a URL; nil
	// means NewDefaultServiceResolver.
	ServiceResolver ServiceResolver
}

// Interpreter is the resource interpreter backed by interpreter webhooks. It
// reads the ResourceInterpreterWebhookConfigurations from a lister, sorted
// once until Invalidate says they changed (the informer's handlers call it);
// the HTTP clients it builds are cached. It is safe for concurrent use.
type Interpreter struct {
	lister   configlisters.ResourceInterpreterWebhookConfigurationLister
	resolver ServiceResolver
	clients  *clientCache
	// generation counts Invalidate calls; sorted holds the configurations
	// as listed at a generation.
	generation atomic.Uint64
	sorted     atomic.Pointer[sortedConfigs]
}

type sortedConfigs struct {
	generation uint64
	configs    []*configv1alpha1.ResourceInterpreterWebhookConfiguration
}

// Invalidate tells the interpreter the configurations changed: the next
// call lists them again.
func (i *Interpreter) Invalidate() { i.generation.Add(1) }

// configs returns the configurations in name order, listing and sorting
// them only when they changed since the last time.
func (i *Interpreter) configs() ([]*configv1alpha1.ResourceInterpreterWebhookConfiguration, error) {
	gen := i.generation.Load()
	if c := i.sorted.Load(); c != nil && c.generation == gen {
		return c.configs, nil
	}
	configs, err := i.lister.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing resource interpreter webhook configurations: %w", err)
	}
	slices.SortFunc(configs, func(a, b *configv1alpha1.ResourceInterpreterWebhookConfiguration) int {
		return strings.Compare(a.Name, b.Name)
	})
	// A change after gen was read leaves this entry stale: the next call
	// lists again.
	i.sorted.Store(&sortedConfigs{generation: gen, configs: configs})
	return configs, nil
}

// Interpreter implements interpreter.Interpreter.
var _ interpreter.Interpreter = (*Interpreter)(nil)

// New returns an interpreter calling the webhooks configured by the
// ResourceInterpreterWebhookConfigurations in lister.
func New(lister configlisters.ResourceInterpreterWebhookConfigurationLister, opts Options) *Interpreter {
	resolver := opts.ServiceResolver
	if resolver == nil {
		resolver = NewDefaultServiceResolver()
	}
	return &Interpreter{lister: lister, resolver: resolver, clients: newClientCache()}
}

// HookEnabled tells whether a webhook handles operation for gvk. It is false
// for Prune, which this interpreter never calls, and when the configurations
// cannot be listed.
func (i *Interpreter) HookEnabled(gvk schema.GroupVersionKind, operation interpreter.Operation) bool {
	h, err := i.find(gvk, operation)
	return err == nil && h != nil
}

// hook is the webhook chosen for one call.
type hook struct {
	// config is the name of the ResourceInterpreterWebhookConfiguration.
	config string
	// webhook is read-only: it belongs to the lister's cache.
	webhook *configv1alpha1.ResourceInterpreterWebhook
}

// find returns the webhook handling operation for gvk, or nil when none does.
// When several do, the first wins, in configuration name order and then in
// the order of the configuration's webhooks, so the choice is stable whatever
// order the lister returns.
func (i *Interpreter) find(gvk schema.GroupVersionKind, operation interpreter.Operation) (*hook, error) {
	if operation == interpreter.Prune {
		return nil, nil
	}
	configs, err := i.configs()
	if err != nil {
		return nil, err
	}
	op := configv1alpha1.InterpreterOperation(operation)
	for _, c := range configs {
		for j := range c.Webhooks {
			w := &c.Webhooks[j]
			for k := range w.Rules {
				if ruleMatches(&w.Rules[k], gvk, op) {
					return &hook{config: c.Name, webhook: w}, nil
				}
			}
		}
	}
	return nil, nil
}

// ruleMatches tells whether r covers op on gvk. "*" in a list matches
// anything; an empty list matches nothing.
func ruleMatches(r *configv1alpha1.RuleWithOperations, gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	return exactOrWildcard(r.Operations, op, configv1alpha1.InterpreterOperationAll) &&
		exactOrWildcard(r.APIGroups, gvk.Group, "*") &&
		exactOrWildcard(r.APIVersions, gvk.Version, "*") &&
		exactOrWildcard(r.Kinds, gvk.Kind, "*")
}

func exactOrWildcard[T comparable](items []T, want, wildcard T) bool {
	for _, it := range items {
		if it == want || it == wildcard {
			return true
		}
	}
	return false
}
