package detector

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestTemplateNamespace(t *testing.T) {
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	for _, tc := range []struct{ key, want string }{
		{templateKey(deploy, "team-a", "web"), "team-a"},
		{templateKey(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "", "team-a"), ""},
		{"not-a-template-key", ""},
	} {
		if got := templateNamespace(tc.key); got != tc.want {
			t.Errorf("templateNamespace(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}
