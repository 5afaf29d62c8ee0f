package overrides

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// TestApplyGuestbook: an OverridePolicy on a custom resource (a Guestbook)
// replacing /spec/size and adding /metadata/annotations.
func TestApplyGuestbook(t *testing.T) {
	t.Parallel()
	gb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "webapp.my.domain/v1",
		"kind":       "Guestbook",
		"metadata":   map[string]any{"name": "guestbook-sample", "namespace": "default"},
		"spec":       map[string]any{"size": int64(2)},
	}}
	p := op("default", "guestbook-sample", []policyv1alpha1.ResourceSelector{{APIVersion: "webapp.my.domain/v1", Kind: "Guestbook"}},
		policyv1alpha1.RuleWithCluster{Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
			{Path: "/spec/size", Operator: policyv1alpha1.OverriderOpReplace, Value: rawJSON(t, 4)},
			{Path: "/metadata/annotations", Operator: policyv1alpha1.OverriderOpAdd, Value: rawJSON(t, map[string]string{"OverridePolicy": "test"})},
		}}})
	annos, err := Apply(gb, member("member1", nil), nil, []*policyv1alpha1.OverridePolicy{p})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "webapp.my.domain/v1",
		"kind":       "Guestbook",
		"metadata": map[string]any{"name": "guestbook-sample", "namespace": "default",
			"annotations": map[string]any{"OverridePolicy": "test"}},
		"spec": map[string]any{"size": int64(4)},
	}
	if diff := cmp.Diff(want, gb.Object); diff != "" {
		t.Errorf("object (-want +got):\n%s", diff)
	}
	wantAnnos := map[string]string{policyv1alpha1.AppliedOverridesAnnotation: `[{"policyName":"guestbook-sample","overriders":{"plaintext":[` +
		`{"path":"/spec/size","operator":"replace","value":4},` +
		`{"path":"/metadata/annotations","operator":"add","value":{"OverridePolicy":"test"}}]}}]`}
	if diff := cmp.Diff(wantAnnos, annos); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

// TestApplyOrder checks the application order through the args each rule
// appends: the last one applied wins.
func TestApplyOrder(t *testing.T) {
	t.Parallel()
	none := []policyv1alpha1.ResourceSelector(nil)
	all := []policyv1alpha1.ResourceSelector{selectAllDeployments}
	byLabel := []policyv1alpha1.ResourceSelector{selectNginxByLabel}
	byName := []policyv1alpha1.ResourceSelector{selectNginxByName}
	for _, tc := range []struct {
		name string
		cops []*policyv1alpha1.ClusterOverridePolicy
		ops  []*policyv1alpha1.OverridePolicy
		want []string
	}{
		{
			name: "cluster policies before namespace policies",
			cops: []*policyv1alpha1.ClusterOverridePolicy{cop("z", byName, appendArg("cop-z", nil))},
			ops:  []*policyv1alpha1.OverridePolicy{op("default", "a", all, appendArg("op-a", nil))},
			want: []string{"--port=80", "cop-z", "op-a"},
		},
		{
			name: "implicit priority before name",
			ops: []*policyv1alpha1.OverridePolicy{
				op("default", "a", byName, appendArg("name", nil)),
				op("default", "b", byLabel, appendArg("label", nil)),
				op("default", "c", all, appendArg("all", nil)),
			},
			want: []string{"--port=80", "all", "label", "name"},
		},
		{
			name: "best matching selector of a policy counts",
			ops: []*policyv1alpha1.OverridePolicy{
				op("default", "a", []policyv1alpha1.ResourceSelector{selectAllDeployments, selectNginxByName}, appendArg("a", nil)),
				op("default", "b", byLabel, appendArg("b", nil)),
			},
			want: []string{"--port=80", "b", "a"},
		},
		{
			name: "no selectors counts as match-all",
			cops: []*policyv1alpha1.ClusterOverridePolicy{
				cop("a", byLabel, appendArg("label", nil)),
				cop("b", none, appendArg("none", nil)),
				cop("c", all, appendArg("all", nil)),
			},
			want: []string{"--port=80", "none", "all", "label"},
		},
		{
			name: "same priority by name",
			cops: []*policyv1alpha1.ClusterOverridePolicy{cop("b", all, appendArg("b", nil)), cop("a", all, appendArg("a", nil))},
			want: []string{"--port=80", "a", "b"},
		},
		{
			name: "rules of one policy in order",
			ops:  []*policyv1alpha1.OverridePolicy{op("default", "a", all, appendArg("1", nil), appendArg("2", nil))},
			want: []string{"--port=80", "1", "2"},
		},
		{
			name: "non-matching, deleted and foreign policies ignored",
			cops: []*policyv1alpha1.ClusterOverridePolicy{
				cop("other", []policyv1alpha1.ResourceSelector{selectOther}, appendArg("other", nil)),
				func() *policyv1alpha1.ClusterOverridePolicy {
					p := cop("deleted", all, appendArg("deleted", nil))
					p.DeletionTimestamp = &metav1.Time{}
					return p
				}(),
			},
			ops: []*policyv1alpha1.OverridePolicy{
				op("prod", "foreign", none, appendArg("foreign", nil)),
				func() *policyv1alpha1.OverridePolicy {
					p := op("default", "deleted", all, appendArg("deleted", nil))
					p.DeletionTimestamp = &metav1.Time{}
					return p
				}(),
			},
			want: []string{"--port=80"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := deployment()
			if _, err := Apply(obj, member("member1", nil), tc.cops, tc.ops); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, nginxArgs(t, obj)); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyTargetCluster(t *testing.T) {
	t.Parallel()
	names := func(n ...string) *policyv1alpha1.ClusterAffinity {
		return &policyv1alpha1.ClusterAffinity{ClusterNames: n}
	}
	p := op("default", "p", nil,
		appendArg("all", nil),
		appendArg("member1", names("member1")),
		appendArg("member2", names("member2")),
		appendArg("us", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"location": "us"}}}),
		appendArg("not-member1", &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"member1"}}),
	)
	for _, tc := range []struct {
		cluster string
		labels  map[string]string
		want    []string
	}{
		{"member1", map[string]string{"location": "us"}, []string{"--port=80", "all", "member1", "us"}},
		{"member2", nil, []string{"--port=80", "all", "member2", "not-member1"}},
		{"member3", map[string]string{"location": "eu"}, []string{"--port=80", "all", "not-member1"}},
	} {
		t.Run(tc.cluster, func(t *testing.T) {
			t.Parallel()
			obj := deployment()
			if _, err := Apply(obj, member(tc.cluster, tc.labels), nil, []*policyv1alpha1.OverridePolicy{p}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, nginxArgs(t, obj)); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

//nolint:staticcheck // exercises the deprecated targetCluster + overriders form.
func TestApplyDeprecatedForm(t *testing.T) {
	t.Parallel()
	deprecated := func(target *policyv1alpha1.ClusterAffinity, rules ...policyv1alpha1.RuleWithCluster) *policyv1alpha1.ClusterOverridePolicy {
		p := cop("old", nil, rules...)
		p.Spec.TargetCluster = target
		p.Spec.Overriders = appendArg("deprecated", nil).Overriders
		return p
	}
	for _, tc := range []struct {
		name string
		p    *policyv1alpha1.ClusterOverridePolicy
		want []string
	}{
		{"nil target", deprecated(nil), []string{"--port=80", "deprecated"}},
		{"matching target", deprecated(&policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}), []string{"--port=80", "deprecated"}},
		{"other target", deprecated(&policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}), []string{"--port=80"}},
		{"overrideRules take precedence", deprecated(nil, appendArg("rule", nil)), []string{"--port=80", "rule"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := deployment()
			annos, err := Apply(obj, member("member1", nil), []*policyv1alpha1.ClusterOverridePolicy{tc.p}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, nginxArgs(t, obj)); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if _, ok := annos[policyv1alpha1.AppliedClusterOverridesAnnotation]; ok != (len(tc.want) > 1) {
				t.Errorf("annotations = %v", annos)
			}
		})
	}
}
