// Package validation validates the config.karmada.io kinds as Karmada's
// admission webhooks and CRD schemas do. Checks that need other objects
// (two ResourceInterpreterCustomizations defining the same operation for
// one kind) belong to the registry, not here.
package validation

import (
	"fmt"
	"net/url"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
)

// ValidateResourceInterpreterCustomization validates a
// ResourceInterpreterCustomization on create: its target, and that every
// Lua script compiles and defines the global function of its operation.
func ValidateResourceInterpreterCustomization(ric *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&ric.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateRICSpec(&ric.Spec, field.NewPath("spec"))...)
}

// ValidateResourceInterpreterCustomizationUpdate validates a
// ResourceInterpreterCustomization on update.
func ValidateResourceInterpreterCustomizationUpdate(ric, old *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&ric.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateRICSpec(&ric.Spec, field.NewPath("spec"))...)
}

func validateRICSpec(s *configv1alpha1.ResourceInterpreterCustomizationSpec, p *field.Path) field.ErrorList {
	errs := validateAPIVersion(s.Target.APIVersion, p.Child("target", "apiVersion"))
	if s.Target.Kind == "" {
		errs = append(errs, field.Required(p.Child("target", "kind"), ""))
	}
	cp := p.Child("customizations")
	for _, rule := range s.Customizations.Scripts() {
		if !rule.Set {
			continue
		}
		sp := cp.Child(rule.Field, "luaScript")
		if strings.TrimSpace(rule.Script) == "" {
			errs = append(errs, field.Required(sp, fmt.Sprintf("must define the function %s", rule.Function)))
			continue
		}
		errs = append(errs, ValidateLuaScript(rule.Script, rule.Function, sp)...)
	}
	return errs
}

// ValidateLuaScript checks that script parses and compiles as Lua 5.1 and
// defines the global function fn (function fn(...) or fn = function(...)),
// without running it.
func ValidateLuaScript(script, fn string, p *field.Path) field.ErrorList {
	chunk, err := parse.Parse(strings.NewReader(script), "luaScript")
	if err != nil {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, fmt.Sprintf("Lua syntax error: %v", err))}
	}
	if _, err := lua.Compile(chunk, "luaScript"); err != nil {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, fmt.Sprintf("Lua compile error: %v", err))}
	}
	if !definesGlobalFunction(chunk, fn) {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, fmt.Sprintf("must define the global function %s", fn))}
	}
	return nil
}

// definesGlobalFunction reports whether stmts define the global function
// name in the main chunk or in a block of it; definitions inside function
// bodies only happen when those run, so they do not count.
func definesGlobalFunction(stmts []ast.Stmt, name string) bool {
	isName := func(e ast.Expr) bool {
		id, ok := e.(*ast.IdentExpr)
		return ok && id.Value == name
	}
	for _, st := range stmts {
		switch s := st.(type) {
		case *ast.FuncDefStmt:
			if s.Name.Receiver == nil && isName(s.Name.Func) {
				return true
			}
		case *ast.AssignStmt:
			for i, lhs := range s.Lhs {
				if _, fn := rhsAt(s.Rhs, i).(*ast.FunctionExpr); fn && isName(lhs) {
					return true
				}
			}
		case *ast.DoBlockStmt:
			if definesGlobalFunction(s.Stmts, name) {
				return true
			}
		case *ast.IfStmt:
			if definesGlobalFunction(s.Then, name) || definesGlobalFunction(s.Else, name) {
				return true
			}
		case *ast.WhileStmt:
			if definesGlobalFunction(s.Stmts, name) {
				return true
			}
		case *ast.RepeatStmt:
			if definesGlobalFunction(s.Stmts, name) {
				return true
			}
		case *ast.NumberForStmt:
			if definesGlobalFunction(s.Stmts, name) {
				return true
			}
		case *ast.GenericForStmt:
			if definesGlobalFunction(s.Stmts, name) {
				return true
			}
		}
	}
	return false
}

func rhsAt(exprs []ast.Expr, i int) ast.Expr {
	if i < len(exprs) {
		return exprs[i]
	}
	return nil
}

// ValidateResourceInterpreterWebhookConfiguration validates a
// ResourceInterpreterWebhookConfiguration on create.
func ValidateResourceInterpreterWebhookConfiguration(c *configv1alpha1.ResourceInterpreterWebhookConfiguration) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateWebhooks(c.Webhooks, field.NewPath("webhooks"))...)
}

// ValidateResourceInterpreterWebhookConfigurationUpdate validates a
// ResourceInterpreterWebhookConfiguration on update.
func ValidateResourceInterpreterWebhookConfigurationUpdate(c, old *configv1alpha1.ResourceInterpreterWebhookConfiguration) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateWebhooks(c.Webhooks, field.NewPath("webhooks"))...)
}

// supportedOperations are the operations a webhook rule may name.
var supportedOperations = []configv1alpha1.InterpreterOperation{
	configv1alpha1.InterpreterOperationAll,
	configv1alpha1.InterpreterOperationInterpretReplica,
	configv1alpha1.InterpreterOperationInterpretComponent,
	configv1alpha1.InterpreterOperationReviseReplica,
	configv1alpha1.InterpreterOperationInterpretStatus,
	configv1alpha1.InterpreterOperationPrune,
	configv1alpha1.InterpreterOperationRetain,
	configv1alpha1.InterpreterOperationAggregateStatus,
	configv1alpha1.InterpreterOperationInterpretHealth,
	configv1alpha1.InterpreterOperationInterpretDependency,
}

var supportedOperationSet = sets.New(supportedOperations...)

// acceptedInterpreterContextVersions are the ResourceInterpreterContext
// versions Flotilla can send; a webhook must accept one of them.
var acceptedInterpreterContextVersions = []string{configv1alpha1.SchemeGroupVersion.Version}

func validateWebhooks(hooks []configv1alpha1.ResourceInterpreterWebhook, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range hooks {
		hp := p.Index(i)
		errs = append(errs, validateWebhook(&hooks[i], hp)...)
		if names.Has(hooks[i].Name) {
			errs = append(errs, field.Duplicate(hp.Child("name"), hooks[i].Name))
		}
		names.Insert(hooks[i].Name)
	}
	return errs
}

func validateWebhook(h *configv1alpha1.ResourceInterpreterWebhook, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, validation.IsFullyQualifiedDomainName(p.Child("name"), h.Name)...)
	}
	for i := range h.Rules {
		errs = append(errs, validateRuleWithOperations(&h.Rules[i], p.Child("rules").Index(i))...)
	}
	if h.TimeoutSeconds != nil && (*h.TimeoutSeconds < 1 || *h.TimeoutSeconds > 30) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *h.TimeoutSeconds, "the timeout value must be between 1 and 30 seconds"))
	}
	cc, cp := h.ClientConfig, p.Child("clientConfig")
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, field.Required(cp, "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, validateWebhookURL(*cc.URL, cp.Child("url"))...)
	default:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		errs = append(errs, validateWebhookService(cc.Service.Namespace, cc.Service.Name, cc.Service.Path, port, cp.Child("service"))...)
	}
	return append(errs, validateInterpreterContextVersions(h.InterpreterContextVersions, p.Child("interpreterContextVersions"))...)
}

// validateWebhookURL accepts https://host[:port][/path] as admission webhooks do.
func validateWebhookURL(raw string, p *field.Path) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Invalid(p, raw, "must be a valid URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(p, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(p, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

// validateWebhookService checks a Service reference as admission webhooks do.
func validateWebhookService(namespace, name string, path *string, port int32, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), "service name is required"))
	}
	if namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), "service namespace is required"))
	}
	for _, msg := range validation.IsValidPortNum(int(port)) {
		errs = append(errs, field.Invalid(p.Child("port"), port, msg))
	}
	if path == nil || *path == "/" {
		return errs
	}
	pp := p.Child("path")
	if !strings.HasPrefix(*path, "/") {
		return append(errs, field.Invalid(pp, *path, "must start with a '/'"))
	}
	steps := strings.Split((*path)[1:], "/")
	for i, step := range steps {
		if step == "" {
			if i != len(steps)-1 {
				errs = append(errs, field.Invalid(pp, *path, fmt.Sprintf("segment[%d] may not be empty", i)))
			}
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(step) {
			errs = append(errs, field.Invalid(pp, *path, fmt.Sprintf("segment[%d]: %s", i, msg)))
		}
	}
	return errs
}

func validateRuleWithOperations(r *configv1alpha1.RuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	op := p.Child("operations")
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(op, ""))
	}
	if len(r.Operations) > 1 && hasWildcard(r.Operations) {
		errs = append(errs, field.Invalid(op, r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, o := range r.Operations {
		if !supportedOperationSet.Has(o) {
			errs = append(errs, field.NotSupported(op.Index(i), o, supportedOperations))
		}
	}
	errs = append(errs, validateRuleList(r.APIGroups, true, p.Child("apiGroups"), "API groups")...)
	errs = append(errs, validateRuleList(r.APIVersions, false, p.Child("apiVersions"), "API versions")...)
	return append(errs, validateRuleList(r.Kinds, false, p.Child("kinds"), "kinds")...)
}

// validateRuleList checks one list of a Rule: not empty, "*" alone, and no
// empty item unless allowEmpty (the core API group is "").
func validateRuleList(items []string, allowEmpty bool, p *field.Path, what string) field.ErrorList {
	var errs field.ErrorList
	if len(items) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	if len(items) > 1 && hasWildcard(items) {
		errs = append(errs, field.Invalid(p, items, fmt.Sprintf("if '*' is present, must not specify other %s", what)))
	}
	if !allowEmpty {
		for i, item := range items {
			if item == "" {
				errs = append(errs, field.Required(p.Index(i), ""))
			}
		}
	}
	return errs
}

func hasWildcard[T ~string](items []T) bool {
	for _, s := range items {
		if s == "*" {
			return true
		}
	}
	return false
}

func validateInterpreterContextVersions(versions []string, p *field.Path) field.ErrorList {
	accepted := strings.Join(acceptedInterpreterContextVersions, ", ")
	if len(versions) == 0 {
		return field.ErrorList{field.Required(p, "must specify one of "+accepted)}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	hasAccepted := false
	for i, v := range versions {
		if seen.Has(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen.Insert(v)
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
		for _, a := range acceptedInterpreterContextVersions {
			hasAccepted = hasAccepted || v == a
		}
	}
	if !hasAccepted {
		errs = append(errs, field.Invalid(p, versions, "must include at least one of "+accepted))
	}
	return errs
}

// validateAPIVersion checks a required group/version such as apps/v1 or v1.
func validateAPIVersion(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	gv, err := schema.ParseGroupVersion(v)
	if err != nil {
		return field.ErrorList{field.Invalid(p, v, err.Error())}
	}
	if gv.Version == "" {
		return field.ErrorList{field.Invalid(p, v, "must specify a version")}
	}
	return nil
}

// ValidateNoDuplicateOperations rejects a ResourceInterpreterCustomization
// defining an operation that another customization (others, the stored
// ones; ric itself is skipped by name) already defines for the same target,
// as Karmada's admission webhook does: which script would run would
// otherwise depend on names. dependencyInterpretation may repeat: every
// customization defining it adds its dependencies to the others'.
func ValidateNoDuplicateOperations(ric *configv1alpha1.ResourceInterpreterCustomization, others []*configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "customizations")
	mine := ric.Spec.Customizations.Scripts()
	for _, o := range others {
		if o.Name == ric.Name || o.Spec.Target != ric.Spec.Target {
			continue
		}
		theirs := o.Spec.Customizations.Scripts()
		for i, rule := range mine {
			if rule.Set && theirs[i].Set && rule.Operation != configv1alpha1.InterpreterOperationInterpretDependency {
				errs = append(errs, field.Invalid(p.Child(rule.Field), field.OmitValueType{},
					fmt.Sprintf("%s of %s %s is already defined by ResourceInterpreterCustomization %s", rule.Operation,
						ric.Spec.Target.APIVersion, ric.Spec.Target.Kind, o.Name)))
			}
		}
	}
	return errs
}
