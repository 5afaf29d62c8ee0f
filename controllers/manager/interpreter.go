package manager

import (
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	"github.com/flotilla-io/flotilla/controllers/interpreter"
	"github.com/flotilla-io/flotilla/controllers/interpreter/lua"
	"github.com/flotilla-io/flotilla/controllers/interpreter/thirdparty"
	"github.com/flotilla-io/flotilla/controllers/interpreter/webhook"
)

// NewInterpreter returns the interpreter every controller uses: the
// ResourceInterpreterCustomizations, then the interpreter webhooks, then
// the customizations shipped for third-party kinds, then the native
// built-ins (API-SPEC §5.2), and the informer syncs to wait for
// before interpreting anything.
// The customizations follow their informer: each generation is compiled
// once, when it arrives.
//
// host, when nil (flotilla-agent, which may not read the host's
// Services), leaves webhooks referring to a Service resolved by their
// cluster DNS name.
func NewInterpreter(factory externalversions.SharedInformerFactory, host informers.SharedInformerFactory) (*lua.Customizations, interpreter.Interpreter, []cache.InformerSynced, error) {
	customizations := lua.NewCustomizations()
	ric := factory.Config().V1alpha1().ResourceInterpreterCustomizations().Informer()
	set := func(obj any) {
		if r, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization); ok {
			if err := customizations.Set(r); err != nil {
				klog.Background().Error(err, "Customization not usable; its kind falls back to the next interpreter")
			}
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
	chain := interpreter.Chain{customizations, webhooks, shipped, interpreter.NewNative()}
	return customizations, chain, []cache.InformerSynced{loaded.HasSynced, hooksLoaded.HasSynced}, nil
}
