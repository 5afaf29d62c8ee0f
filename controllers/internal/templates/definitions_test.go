package templates

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var (
	widgetsV1 = schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "widgets"}
	widgetsV2 = schema.GroupVersionResource{Group: "example.io", Version: "v2", Resource: "widgets"}
)

// widgetCRD is the CRD of example.io Widgets with uid, serving the
// versions served (and storing the first), Established or not.
func widgetCRD(uid types.UID, isEstablished bool, served ...string) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.io", UID: uid},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
		},
	}
	for i, v := range []string{"v1", "v2"} {
		isServed := false
		for _, s := range served {
			isServed = isServed || s == v
		}
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: isServed, Storage: i == 0})
	}
	status := apiextensionsv1.ConditionFalse
	if isEstablished {
		status = apiextensionsv1.ConditionTrue
	}
	crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue},
		{Type: apiextensionsv1.Established, Status: status},
	}
	return crd
}

func TestDefinitionTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		crd     *apiextensionsv1.CustomResourceDefinition
		version string
		want    target
	}{
		{"established, version served", widgetCRD("u1", true, "v1"), "v1", target{known: true, served: true, gvr: widgetsV1, definition: "u1"}},
		{"another served version", widgetCRD("u1", true, "v1", "v2"), "v2", target{known: true, served: true, gvr: widgetsV2, definition: "u1"}},
		{"not established yet", widgetCRD("u1", false, "v1"), "v1", target{known: true, definition: "u1"}},
		{"version not served", widgetCRD("u1", true, "v2"), "v1", target{known: true, definition: "u1", elsewhere: true}},
		{"version unknown", widgetCRD("u1", true, "v1"), "v3", target{known: true, definition: "u1", elsewhere: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := definitionTarget(tc.crd, tc.version); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDefiningOne(t *testing.T) {
	t.Parallel()
	pending, accepted := widgetCRD("pending", false, "v1"), widgetCRD("accepted", true, "v1")
	for _, tc := range []struct {
		name string
		crds []*apiextensionsv1.CustomResourceDefinition
		want *apiextensionsv1.CustomResourceDefinition
	}{
		{"none", nil, nil},
		{"one, not established", []*apiextensionsv1.CustomResourceDefinition{pending}, pending},
		{"the established one first", []*apiextensionsv1.CustomResourceDefinition{pending, accepted}, accepted},
	} {
		if got := definingOne(tc.crds); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestServingChanged(t *testing.T) {
	t.Parallel()
	base := widgetCRD("u1", true, "v1")
	for _, tc := range []struct {
		name string
		crd  *apiextensionsv1.CustomResourceDefinition
		want bool
	}{
		{"the same", widgetCRD("u1", true, "v1"), false},
		{"only its status conditions' times", func() *apiextensionsv1.CustomResourceDefinition {
			c := widgetCRD("u1", true, "v1")
			c.Status.Conditions[0].LastTransitionTime = metav1.Now()
			c.Status.StoredVersions = []string{"v1"}
			return c
		}(), false},
		{"created again", widgetCRD("u2", true, "v1"), true},
		{"no longer established", widgetCRD("u1", false, "v1"), true},
		{"another version served", widgetCRD("u1", true, "v1", "v2"), true},
		{"a version no longer served", widgetCRD("u1", true, "v2"), true},
	} {
		if got := servingChanged(base, tc.crd); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	served := func(gvr schema.GroupVersionResource, def types.UID) target {
		return target{known: true, served: true, gvr: gvr, definition: def}
	}
	for _, tc := range []struct {
		name       string
		running    bool
		gvr        schema.GroupVersionResource
		definition types.UID
		now        target
		want       step
	}{
		{"not running, served", false, schema.GroupVersionResource{}, "", served(widgetsV1, "u1"), step{start: true}},
		{"not running, not served", false, schema.GroupVersionResource{}, "", target{known: true}, step{}},
		{"not running, host error", false, schema.GroupVersionResource{}, "", target{}, step{}},
		{"running, served by the same CRD", true, widgetsV1, "u1", served(widgetsV1, "u1"), step{}},
		{"running, a built-in kind", true, widgetsV1, "", served(widgetsV1, ""), step{}},
		{"running under no known CRD, now known served by one", true, widgetsV1, "", served(widgetsV1, "u1"), step{}},
		{"running, host error", true, widgetsV1, "u1", target{}, step{}},
		{"CRD deleted", true, widgetsV1, "u1", target{known: true}, step{stop: true, forget: true}},
		{"CRD created again, not established yet", true, widgetsV1, "u1", target{known: true, definition: "u2"}, step{stop: true, forget: true}},
		{"CRD created again and served", true, widgetsV1, "u1", served(widgetsV1, "u2"), step{stop: true, forget: true, start: true}},
		{"the same CRD no longer serves the version", true, widgetsV1, "u1", target{known: true, definition: "u1", elsewhere: true}, step{stop: true}},
		{"a built-in kind missing from discovery", true, widgetsV1, "", target{known: true}, step{}},
		{"served at another resource", true, widgetsV1, "", served(widgetsV2, ""), step{stop: true, start: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := plan(tc.running, tc.gvr, tc.definition, tc.now); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
