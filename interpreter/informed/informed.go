package informed

import (
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/interpreter/lua"
	"github.com/flotilla-io/flotilla/interpreter/thirdparty"
	"github.com/flotilla-io/flotilla/interpreter/webhook"
)

// New returns the interpreter every controller uses: the
// ResourceInterpreterCustomizations, then the interpreter webhooks, then the
// customizations shipped for third-party kinds, then the native built-ins
// (Karmada's order), and the informer syncs to wait for before interpreting
// anything. The customizations follow their informer: each generation is
// compiled once, when it arrives.
//
// host, when nil (flotilla-agent, which may not read the host's
// Services), leaves webhooks referring to a Service resolved by their
// cluster DNS name.
func New(factory externalversions.SharedInformerFactory, host informers.SharedInformerFactory) (*lua.Customizations, interpreter.Interpreter, []cache.InformerSynced, error) {
	customizations := lua.NewCustomizations()
	// Several customizations may define dependencyInterpretation for one
	// kind; the union runs them all, each from an interpreter of its own.
	deps := dependencyHooks{union: interpreter.NewDependencyUnion(), byName: map[string]*lua.Customizations{}}
	ric := factory.Config().V1alpha1().ResourceInterpreterCustomizations().Informer()
	set := func(obj any) {
		if r, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization); ok {
			if err := customizations.Set(r); err != nil {
				klog.Background().Error(err, "Customization not usable; its kind falls back to the next interpreter")
			}
			deps.set(r)
		}
	}
	// The handler's own sync, not the informer's: controllers start once
	// every customization listed has been compiled.
	loaded, err := ric.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if r, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization); ok {
				customizations.Delete(r.Name)
				deps.remove(r.Name)
			}
		},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	hooks := factory.Config().V1alpha1().ResourceInterpreterWebhookConfigurations()
	// Service webhooks are looked up on the host, so an ExternalName
	// Service reaches a webhook outside the host cluster.
	var opts webhook.Options
	if host != nil {
		opts.ServiceResolver = webhook.NewServiceLookupResolver(host.Core().V1().Services().Lister())
	}
	webhooks := webhook.New(hooks.Lister(), opts)
	shipped, err := thirdparty.New()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the shipped third-party customizations: %w", err)
	}
	invalidate := func(any) { webhooks.Invalidate() }
	hooksLoaded, err := hooks.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    invalidate,
		UpdateFunc: func(_, obj any) { webhooks.Invalidate() },
		DeleteFunc: invalidate,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	chain := interpreter.Chain{deps.union, customizations, webhooks, shipped, interpreter.NewNative()}
	return customizations, chain, []cache.InformerSynced{loaded.HasSynced, hooksLoaded.HasSynced}, nil
}

// dependencyHooks keeps, per customization defining dependencyInterpretation,
// an interpreter of that script alone in the union. Only the informer's
// handler calls it, one event at a time.
type dependencyHooks struct {
	union  *interpreter.DependencyUnion
	byName map[string]*lua.Customizations
}

// set follows ric: its dependency script is compiled once per generation
// (lua.Customizations.Set); a customization without one, or whose script
// does not compile (logged by the main Set), is no member.
func (d dependencyHooks) set(ric *configv1alpha1.ResourceInterpreterCustomization) {
	if ric.Spec.Customizations.DependencyInterpretation == nil {
		d.remove(ric.Name)
		return
	}
	only := &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: *ric.ObjectMeta.DeepCopy()}
	only.Spec.Target = ric.Spec.Target
	only.Spec.Customizations.DependencyInterpretation = ric.Spec.Customizations.DependencyInterpretation.DeepCopy()
	c, ok := d.byName[ric.Name]
	if !ok {
		c = lua.NewCustomizations()
		d.byName[ric.Name] = c
	}
	if err := c.Set(only); err != nil {
		d.union.Set(ric.Name, nil)
		return
	}
	d.union.Set(ric.Name, c)
}

// remove takes the customization's interpreter out of the union. The
// interpreter itself is left as it is and dropped: a reader that took it
// from the union just before still gets its answer, not "no customization
// defines this operation".
func (d dependencyHooks) remove(name string) {
	d.union.Set(name, nil)
	delete(d.byName, name)
}
