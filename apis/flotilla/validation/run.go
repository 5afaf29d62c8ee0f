package validation

import (
	"encoding/json"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// ValidateResourceRevision validates a ResourceRevision on create: the
// resource it belongs to, a revision from 1, a hash and a template that is
// an object of the resource's apiVersion and kind.
func ValidateResourceRevision(r *flotillav1alpha1.ResourceRevision) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&r.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateResource(&r.Resource, field.NewPath("resource"))...)
	if r.Binding == "" {
		errs = append(errs, field.Required(field.NewPath("binding"), ""))
	}
	if r.Revision < 1 {
		errs = append(errs, field.Invalid(field.NewPath("revision"), r.Revision, "must be at least 1"))
	}
	if r.Hash == "" {
		errs = append(errs, field.Required(field.NewPath("hash"), ""))
	}
	tp := field.NewPath("template")
	var t struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	switch {
	case len(r.Template.Raw) == 0:
		errs = append(errs, field.Required(tp, "the template as propagated"))
	case json.Unmarshal(r.Template.Raw, &t) != nil:
		errs = append(errs, field.Invalid(tp, "", "must be a JSON object"))
	case t.APIVersion != r.Resource.APIVersion || t.Kind != r.Resource.Kind:
		errs = append(errs, field.Invalid(tp, t.APIVersion+"/"+t.Kind, "must be of the resource's apiVersion and kind"))
	}
	return errs
}

// ValidateResourceRevisionUpdate validates a ResourceRevision on update:
// only the revision number may change, and only upwards.
func ValidateResourceRevisionUpdate(r, old *flotillav1alpha1.ResourceRevision) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidateResourceRevision(r)...)
	if r.Revision < old.Revision {
		errs = append(errs, field.Invalid(field.NewPath("revision"), r.Revision, "may only grow"))
	}
	if r.Resource != old.Resource {
		errs = append(errs, field.Invalid(field.NewPath("resource"), r.Resource, "is immutable"))
	}
	if r.Binding != old.Binding {
		errs = append(errs, field.Invalid(field.NewPath("binding"), r.Binding, "is immutable"))
	}
	if r.Hash != old.Hash {
		errs = append(errs, field.Invalid(field.NewPath("hash"), r.Hash, "is immutable"))
	}
	if !apiequality.Semantic.DeepEqual(r.Template.Raw, old.Template.Raw) {
		errs = append(errs, field.Forbidden(field.NewPath("template"), "is immutable"))
	}
	return errs
}

// ValidateRolloutRun validates a RolloutRun on create.
func ValidateRolloutRun(r *flotillav1alpha1.RolloutRun) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&r.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateRunSpec(&r.Spec, field.NewPath("spec"))...)
}

// ValidateRolloutRunUpdate validates a RolloutRun on update: what is rolled
// out is immutable; pause, abort and approvals change. An abort cannot be
// taken back, nor an approval.
func ValidateRolloutRunUpdate(r, old *flotillav1alpha1.RolloutRun) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("spec")
	errs = append(errs, validateRunSpec(&r.Spec, p)...)
	n, o := r.Spec, old.Spec
	if n.Resource != o.Resource || n.Binding != o.Binding || n.Strategy != o.Strategy ||
		n.FromRevision != o.FromRevision || n.ToRevision != o.ToRevision {
		errs = append(errs, field.Forbidden(p, "only paused, abort and approvals may change"))
	}
	if o.Abort && !n.Abort {
		errs = append(errs, field.Forbidden(p.Child("abort"), "an aborted run stays aborted"))
	}
	kept := sets.New[flotillav1alpha1.RolloutApproval]()
	for _, a := range n.Approvals {
		kept.Insert(flotillav1alpha1.RolloutApproval{Stage: a.Stage, Gate: a.Gate})
	}
	for _, a := range o.Approvals {
		if !kept.Has(flotillav1alpha1.RolloutApproval{Stage: a.Stage, Gate: a.Gate}) {
			errs = append(errs, field.Forbidden(p.Child("approvals"), "an approval cannot be withdrawn: stage "+a.Stage+" "+string(a.Gate)))
		}
	}
	return errs
}

var gatePositions = []flotillav1alpha1.GatePosition{flotillav1alpha1.GateBefore, flotillav1alpha1.GateAfter}

func validateRunSpec(s *flotillav1alpha1.RolloutRunSpec, p *field.Path) field.ErrorList {
	errs := validateResource(&s.Resource, p.Child("resource"))
	for _, f := range []struct{ name, value string }{{"binding", s.Binding}, {"strategy", s.Strategy}, {"toRevision", s.ToRevision}} {
		if f.value == "" {
			errs = append(errs, field.Required(p.Child(f.name), ""))
		}
	}
	// Two gates (Before, After) per stage at most.
	if n, most := len(s.Approvals), 2*flotillav1alpha1.MaxStages; n > most {
		errs = append(errs, field.TooMany(p.Child("approvals"), n, most))
	}
	seen := sets.New[string]()
	for i, a := range s.Approvals {
		ap := p.Child("approvals").Index(i)
		if a.Stage == "" {
			errs = append(errs, field.Required(ap.Child("stage"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Label(a.Stage) {
				errs = append(errs, field.Invalid(ap.Child("stage"), a.Stage, msg))
			}
		}
		switch a.Gate {
		case flotillav1alpha1.GateBefore, flotillav1alpha1.GateAfter:
		case "":
			errs = append(errs, field.Required(ap.Child("gate"), ""))
		default:
			errs = append(errs, field.NotSupported(ap.Child("gate"), a.Gate, gatePositions))
		}
		key := a.Stage + "/" + string(a.Gate)
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(ap, key))
		}
		seen.Insert(key)
	}
	return errs
}

func validateResource(r *flotillav1alpha1.RolloutResource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, value string }{{"apiVersion", r.APIVersion}, {"kind", r.Kind}, {"name", r.Name}} {
		if f.value == "" {
			errs = append(errs, field.Required(p.Child(f.name), ""))
		}
	}
	return errs
}
