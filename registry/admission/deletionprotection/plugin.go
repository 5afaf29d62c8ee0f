package deletionprotection

import (
	"context"
	"errors"
	"io"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	genericoptions "k8s.io/apiserver/pkg/server/options"
)

const (
	// PluginName is the name of the admission plugin.
	PluginName = "ResourceDeletionProtection"
	// Label is the label that protects an object when its value is Always.
	Label = "resourcetemplate.karmada.io/deletion-protected"
	// Always is the one value of Label that protects.
	Always = "Always"
	// Message is what a refused deletion says; Karmada's webhook words it so.
	Message = "This resource is protected, please make sure to remove the label: " + Label
)

// Register registers the plugin with the server's admission options and
// enables it by default, just before ValidatingAdmissionPolicy so that a
// refused deletion carries this plugin's message rather than the host
// policy's (which the generic ValidatingAdmissionPolicy plugin also enforces
// when it reads the host's policies). Registering twice changes nothing.
func Register(o *genericoptions.AdmissionOptions) {
	if !slices.Contains(o.Plugins.Registered(), PluginName) {
		o.Plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return NewPlugin(), nil })
	}
	if slices.Contains(o.RecommendedPluginOrder, PluginName) {
		return
	}
	i := slices.Index(o.RecommendedPluginOrder, validating.PluginName)
	if i < 0 {
		i = len(o.RecommendedPluginOrder)
	}
	o.RecommendedPluginOrder = slices.Insert(o.RecommendedPluginOrder, i, PluginName)
}

// Plugin refuses to delete an object labelled Label=Always.
type Plugin struct {
	*admission.Handler
}

var _ admission.ValidationInterface = &Plugin{}

// NewPlugin returns the plugin; it handles DELETE only.
func NewPlugin() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Delete)}
}

// Validate implements admission.ValidationInterface. The object being
// deleted is the old object, both for a DELETE of one object and for each
// object of a DELETE of a collection (whose request has no name).
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetOperation() != admission.Delete || a.GetOldObject() == nil {
		return nil
	}
	obj, err := meta.Accessor(a.GetOldObject())
	if err != nil {
		// Not an object with metadata (no labels to protect it).
		return nil
	}
	if obj.GetLabels()[Label] != Always {
		return nil
	}
	name := a.GetName()
	if name == "" {
		name = obj.GetName()
	}
	return apierrors.NewForbidden(a.GetResource().GroupResource(), name, errors.New(Message)) //nolint:staticcheck // ST1005: Karmada's message, verbatim
}
