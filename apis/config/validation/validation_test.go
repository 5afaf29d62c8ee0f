package validation

import (
	"os"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/internal/validationtest"
)

func validRIC(t *testing.T) *configv1alpha1.ResourceInterpreterCustomization {
	t.Helper()
	// The Workload customization, as samples/ ships it.
	manifest, err := os.ReadFile(filepath.Join("..", "..", "..", "samples", "workload-interpreter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ric := &configv1alpha1.ResourceInterpreterCustomization{}
	if err := yaml.UnmarshalStrict(manifest, ric); err != nil {
		t.Fatalf("decoding manifest: %v", err)
	}
	return ric
}

func TestValidateResourceInterpreterCustomization(t *testing.T) {
	t.Parallel()
	cz := func(r *configv1alpha1.ResourceInterpreterCustomization) *configv1alpha1.CustomizationRules {
		return &r.Spec.Customizations
	}
	tests := []struct {
		name    string
		mutate  func(*configv1alpha1.ResourceInterpreterCustomization)
		wantErr string
	}{
		{"sample manifest", func(*configv1alpha1.ResourceInterpreterCustomization) {}, ""},
		{"no customizations", func(r *configv1alpha1.ResourceInterpreterCustomization) { *cz(r) = configv1alpha1.CustomizationRules{} }, ""},
		{"core group target", func(r *configv1alpha1.ResourceInterpreterCustomization) { r.Spec.Target.APIVersion = "v1" }, ""},
		{"namespaced", func(r *configv1alpha1.ResourceInterpreterCustomization) { r.Namespace = "default" }, "metadata.namespace: Forbidden"},
		{"bad name", func(r *configv1alpha1.ResourceInterpreterCustomization) { r.Name = "Bad_Name" }, "metadata.name: Invalid"},
		{"target without apiVersion", func(r *configv1alpha1.ResourceInterpreterCustomization) { r.Spec.Target.APIVersion = "" }, "spec.target.apiVersion: Required"},
		{"target bad apiVersion", func(r *configv1alpha1.ResourceInterpreterCustomization) { r.Spec.Target.APIVersion = "a/b/c" }, "spec.target.apiVersion: Invalid"},
		{"target without kind", func(r *configv1alpha1.ResourceInterpreterCustomization) { r.Spec.Target.Kind = "" }, "spec.target.kind: Required"},
		{"empty script", func(r *configv1alpha1.ResourceInterpreterCustomization) { cz(r).Retention.LuaScript = " \n" }, "spec.customizations.retention.luaScript: Required"},
		{"syntax error", func(r *configv1alpha1.ResourceInterpreterCustomization) {
			cz(r).ReplicaResource.LuaScript = "function GetReplicas(obj)\n  return obj.spec.replicas\n"
		}, "spec.customizations.replicaResource.luaScript: Invalid value: Lua syntax error"},
		{"compile error", func(r *configv1alpha1.ResourceInterpreterCustomization) {
			cz(r).ReplicaRevision.LuaScript = "function ReviseReplica(obj, n)\n  goto nowhere\nend\n"
		}, "spec.customizations.replicaRevision.luaScript: Invalid value: Lua compile error"},
		{"wrong function", func(r *configv1alpha1.ResourceInterpreterCustomization) {
			cz(r).StatusReflection.LuaScript = "function GetReplicas(obj) return 1 end"
		}, "spec.customizations.statusReflection.luaScript: Invalid value: must define the global function ReflectStatus"},
		{"local function", func(r *configv1alpha1.ResourceInterpreterCustomization) {
			cz(r).HealthInterpretation.LuaScript = "local function InterpretHealth(obj) return true end"
		}, "spec.customizations.healthInterpretation.luaScript: Invalid value: must define the global function InterpretHealth"},
		{"method is not a function", func(r *configv1alpha1.ResourceInterpreterCustomization) {
			cz(r).StatusAggregation.LuaScript = "local m = {}\nfunction m:AggregateStatus(a, b) return a end"
		}, "spec.customizations.statusAggregation.luaScript: Invalid"},
		{"only called, not defined", func(r *configv1alpha1.ResourceInterpreterCustomization) {
			cz(r).DependencyInterpretation.LuaScript = "GetDependencies()"
		}, "spec.customizations.dependencyInterpretation.luaScript: Invalid"},
		{"defined inside a function body", func(r *configv1alpha1.ResourceInterpreterCustomization) {
			cz(r).ComponentResource.LuaScript = "function setup()\n  function GetComponents(o) return {} end\nend"
		}, "spec.customizations.componentResource.luaScript: Invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := validRIC(t)
			tc.mutate(r)
			validationtest.Expect(t, ValidateResourceInterpreterCustomization(r).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateResourceInterpreterCustomizationUpdate(t *testing.T) {
	t.Parallel()
	old := validRIC(t)
	old.ResourceVersion = "1"
	r := old.DeepCopy()
	r.Spec.Customizations.Retention = nil
	validationtest.Expect(t, ValidateResourceInterpreterCustomizationUpdate(r, old).ToAggregate(), "")
	r.Spec.Customizations.ReplicaResource.LuaScript = "function ("
	validationtest.Expect(t, ValidateResourceInterpreterCustomizationUpdate(r, old).ToAggregate(), "spec.customizations.replicaResource.luaScript")
	r = old.DeepCopy()
	r.Name = "other"
	validationtest.Expect(t, ValidateResourceInterpreterCustomizationUpdate(r, old).ToAggregate(), "metadata.name")
}

// examplesRIWC is the webhook configuration of Karmada's interpreter example.
const examplesRIWC = `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterWebhookConfiguration
metadata: {name: examples}
webhooks:
  - name: workloads.example.com
    rules:
      - operations: ["InterpretReplica", "ReviseReplica", "Retain", "AggregateStatus", "InterpretHealth", "InterpretStatus", "InterpretDependency"]
        apiGroups: ["workload.example.io"]
        apiVersions: ["v1alpha1"]
        kinds: ["Workload"]
    clientConfig:
      url: https://karmada-interpreter-webhook-example.karmada-system.svc:443/interpreter-workload
      caBundle: Zm9v
    interpreterContextVersions: ["v1alpha1"]
    timeoutSeconds: 3
  - name: core.example.com
    rules:
      - {operations: ["*"], apiGroups: [""], apiVersions: ["*"], kinds: ["*"]}
    clientConfig:
      service: {namespace: karmada-system, name: interpreter, path: /interpret/core}
    interpreterContextVersions: ["v1beta1", "v1alpha1"]
`

func validRIWC(t *testing.T) *configv1alpha1.ResourceInterpreterWebhookConfiguration {
	t.Helper()
	c := &configv1alpha1.ResourceInterpreterWebhookConfiguration{}
	if err := yaml.UnmarshalStrict([]byte(examplesRIWC), c); err != nil {
		t.Fatalf("decoding manifest: %v", err)
	}
	return c
}

func TestValidateResourceInterpreterWebhookConfiguration(t *testing.T) {
	t.Parallel()
	type riwc = configv1alpha1.ResourceInterpreterWebhookConfiguration
	tests := []struct {
		name    string
		mutate  func(*riwc)
		wantErr string
	}{
		{"valid", func(*riwc) {}, ""},
		{"no webhooks", func(c *riwc) { c.Webhooks = nil }, ""},
		{"service port and root path", func(c *riwc) {
			c.Webhooks[1].ClientConfig.Service.Port, c.Webhooks[1].ClientConfig.Service.Path = ptr.To[int32](8443), ptr.To("/")
		}, ""},
		{"namespaced", func(c *riwc) { c.Namespace = "default" }, "metadata.namespace: Forbidden"},
		{"webhook without name", func(c *riwc) { c.Webhooks[0].Name = "" }, "webhooks[0].name: Required"},
		{"name not fully qualified", func(c *riwc) { c.Webhooks[0].Name = "workloads" }, "webhooks[0].name: Invalid"},
		{"duplicate name", func(c *riwc) { c.Webhooks[1].Name = c.Webhooks[0].Name }, "webhooks[1].name: Duplicate value"},
		{"timeout 0", func(c *riwc) { c.Webhooks[0].TimeoutSeconds = ptr.To[int32](0) }, "webhooks[0].timeoutSeconds: Invalid"},
		{"timeout 31", func(c *riwc) { c.Webhooks[0].TimeoutSeconds = ptr.To[int32](31) }, "webhooks[0].timeoutSeconds: Invalid"},
		{"no client config", func(c *riwc) { c.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{} }, "webhooks[0].clientConfig: Required"},
		{"url and service", func(c *riwc) { c.Webhooks[1].ClientConfig.URL = ptr.To("https://a.example.com") }, "webhooks[1].clientConfig: Required value: exactly one of url or service is required"},
		{"http url", func(c *riwc) { c.Webhooks[0].ClientConfig.URL = ptr.To("http://a.example.com/x") }, "webhooks[0].clientConfig.url: Invalid value: \"http\""},
		{"url without host", func(c *riwc) { c.Webhooks[0].ClientConfig.URL = ptr.To("https:///x") }, "webhooks[0].clientConfig.url: Invalid value: \"\": host must be specified"},
		{"url with user", func(c *riwc) { c.Webhooks[0].ClientConfig.URL = ptr.To("https://u:p@a.example.com/x") }, "user information is not permitted"},
		{"url with query", func(c *riwc) { c.Webhooks[0].ClientConfig.URL = ptr.To("https://a.example.com/x?y=1") }, "query parameters are not permitted"},
		{"url with fragment", func(c *riwc) { c.Webhooks[0].ClientConfig.URL = ptr.To("https://a.example.com/x#y") }, "fragments are not permitted"},
		{"unparseable url", func(c *riwc) { c.Webhooks[0].ClientConfig.URL = ptr.To("https://a b/%zz") }, "webhooks[0].clientConfig.url: Invalid"},
		{"service without name", func(c *riwc) { c.Webhooks[1].ClientConfig.Service.Name = "" }, "webhooks[1].clientConfig.service.name: Required"},
		{"service without namespace", func(c *riwc) { c.Webhooks[1].ClientConfig.Service.Namespace = "" }, "webhooks[1].clientConfig.service.namespace: Required"},
		{"service bad port", func(c *riwc) { c.Webhooks[1].ClientConfig.Service.Port = ptr.To[int32](70000) }, "webhooks[1].clientConfig.service.port: Invalid"},
		{"service relative path", func(c *riwc) { c.Webhooks[1].ClientConfig.Service.Path = ptr.To("interpret") }, "webhooks[1].clientConfig.service.path: Invalid value: \"interpret\": must start with a '/'"},
		{"service empty segment", func(c *riwc) { c.Webhooks[1].ClientConfig.Service.Path = ptr.To("/a//b") }, "segment[1] may not be empty"},
		{"service bad segment", func(c *riwc) { c.Webhooks[1].ClientConfig.Service.Path = ptr.To("/Interpret") }, "webhooks[1].clientConfig.service.path: Invalid value: \"/Interpret\": segment[0]"},
		{"rule without operations", func(c *riwc) { c.Webhooks[0].Rules[0].Operations = nil }, "webhooks[0].rules[0].operations: Required"},
		{"wildcard with others", func(c *riwc) { c.Webhooks[1].Rules[0].Operations = append(c.Webhooks[1].Rules[0].Operations, "Retain") }, "webhooks[1].rules[0].operations: Invalid"},
		{"unknown operation", func(c *riwc) { c.Webhooks[0].Rules[0].Operations[1] = "Explode" }, "webhooks[0].rules[0].operations[1]: Unsupported value: \"Explode\""},
		{"rule without groups", func(c *riwc) { c.Webhooks[0].Rules[0].APIGroups = nil }, "webhooks[0].rules[0].apiGroups: Required"},
		{"group wildcard with others", func(c *riwc) { c.Webhooks[0].Rules[0].APIGroups = []string{"*", "apps"} }, "webhooks[0].rules[0].apiGroups: Invalid"},
		{"rule without versions", func(c *riwc) { c.Webhooks[0].Rules[0].APIVersions = nil }, "webhooks[0].rules[0].apiVersions: Required"},
		{"empty version", func(c *riwc) { c.Webhooks[0].Rules[0].APIVersions = []string{"v1", ""} }, "webhooks[0].rules[0].apiVersions[1]: Required"},
		{"version wildcard with others", func(c *riwc) { c.Webhooks[0].Rules[0].APIVersions = []string{"v1", "*"} }, "webhooks[0].rules[0].apiVersions: Invalid"},
		{"rule without kinds", func(c *riwc) { c.Webhooks[0].Rules[0].Kinds = nil }, "webhooks[0].rules[0].kinds: Required"},
		{"empty kind", func(c *riwc) { c.Webhooks[0].Rules[0].Kinds = []string{""} }, "webhooks[0].rules[0].kinds[0]: Required"},
		{"kind wildcard with others", func(c *riwc) { c.Webhooks[0].Rules[0].Kinds = []string{"*", "Pod"} }, "webhooks[0].rules[0].kinds: Invalid"},
		{"no context versions", func(c *riwc) { c.Webhooks[0].InterpreterContextVersions = nil }, "webhooks[0].interpreterContextVersions: Required value: must specify one of v1alpha1"},
		{"duplicate context version", func(c *riwc) { c.Webhooks[1].InterpreterContextVersions = []string{"v1alpha1", "v1alpha1"} }, "webhooks[1].interpreterContextVersions[1]: Invalid value: \"v1alpha1\": duplicate version"},
		{"bad context version", func(c *riwc) { c.Webhooks[1].InterpreterContextVersions[0] = "V1" }, "webhooks[1].interpreterContextVersions[0]: Invalid"},
		{"no accepted context version", func(c *riwc) { c.Webhooks[0].InterpreterContextVersions = []string{"v1"} }, "webhooks[0].interpreterContextVersions: Invalid value: [\"v1\"]: must include at least one of v1alpha1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := validRIWC(t)
			tc.mutate(c)
			validationtest.Expect(t, ValidateResourceInterpreterWebhookConfiguration(c).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateResourceInterpreterWebhookConfigurationUpdate(t *testing.T) {
	t.Parallel()
	old := validRIWC(t)
	old.ResourceVersion = "1"
	c := old.DeepCopy()
	c.Webhooks = c.Webhooks[:1]
	validationtest.Expect(t, ValidateResourceInterpreterWebhookConfigurationUpdate(c, old).ToAggregate(), "")
	c.Webhooks[0].TimeoutSeconds = ptr.To[int32](60)
	validationtest.Expect(t, ValidateResourceInterpreterWebhookConfigurationUpdate(c, old).ToAggregate(), "webhooks[0].timeoutSeconds")
	c = old.DeepCopy()
	c.Name = "renamed"
	validationtest.Expect(t, ValidateResourceInterpreterWebhookConfigurationUpdate(c, old).ToAggregate(), "metadata.name")
}

func TestValidateNoDuplicateOperations(t *testing.T) {
	t.Parallel()
	mine := validRIC(t)
	other := validRIC(t)
	other.Name = "other"
	// Same target, overlapping operations: one error per shared operation,
	// naming the other customization.
	errs := ValidateNoDuplicateOperations(mine, []*configv1alpha1.ResourceInterpreterCustomization{mine, other})
	validationtest.Expect(t, errs.ToAggregate(), "is already defined by ResourceInterpreterCustomization other")
	validationtest.Expect(t, errs.ToAggregate(), "spec.customizations.retention")

	// Disjoint operations are fine.
	disjoint := &configv1alpha1.ResourceInterpreterCustomization{}
	disjoint.Name = "disjoint"
	disjoint.Spec.Target = mine.Spec.Target
	disjoint.Spec.Customizations.ComponentResource = &configv1alpha1.ComponentResourceRequirement{LuaScript: "function GetComponents(o) return {} end"}
	withoutComponents := mine.DeepCopy()
	withoutComponents.Spec.Customizations.ComponentResource = nil
	if errs := ValidateNoDuplicateOperations(disjoint, []*configv1alpha1.ResourceInterpreterCustomization{withoutComponents}); len(errs) != 0 {
		t.Errorf("disjoint operations rejected: %v", errs)
	}
	// dependencyInterpretation alone may repeat: both
	// customizations' dependencies count.
	deps := func(name string) *configv1alpha1.ResourceInterpreterCustomization {
		r := &configv1alpha1.ResourceInterpreterCustomization{}
		r.Name = name
		r.Spec.Target = mine.Spec.Target
		r.Spec.Customizations.DependencyInterpretation = &configv1alpha1.DependencyInterpretation{LuaScript: "function GetDependencies(o) return {} end"}
		return r
	}
	if errs := ValidateNoDuplicateOperations(deps("second"), []*configv1alpha1.ResourceInterpreterCustomization{deps("first")}); len(errs) != 0 {
		t.Errorf("a second dependencyInterpretation rejected: %v", errs)
	}
	withRetain := deps("retaining")
	withRetain.Spec.Customizations.Retention = mine.Spec.Customizations.Retention
	validationtest.Expect(t, ValidateNoDuplicateOperations(withRetain, []*configv1alpha1.ResourceInterpreterCustomization{mine}).ToAggregate(), "spec.customizations.retention")
	if errs := ValidateNoDuplicateOperations(withRetain, []*configv1alpha1.ResourceInterpreterCustomization{mine}); len(errs) != 1 {
		t.Errorf("errors %v, want retention alone", errs)
	}
	// Another target is fine; so is the customization itself (an update).
	elsewhere := other.DeepCopy()
	elsewhere.Spec.Target.Kind = "Other"
	if errs := ValidateNoDuplicateOperations(mine, []*configv1alpha1.ResourceInterpreterCustomization{mine, elsewhere}); len(errs) != 0 {
		t.Errorf("another target or itself rejected: %v", errs)
	}
}
