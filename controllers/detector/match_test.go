package detector

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

func deployment(name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace("default")
	u.SetName(name)
	u.SetLabels(lbls)
	return u
}

type polOpt func(*policy)

func pol(name string, cluster bool, sel policyv1alpha1.ResourceSelector, opts ...polOpt) *policy {
	p := &policy{Cluster: cluster, Name: name, ID: name + "-id", Spec: &policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{sel}}}
	if !cluster {
		p.Namespace = "default"
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func prio(n int32) polOpt { return func(p *policy) { p.Spec.Priority = ptr.To(n) } }
func preempt() polOpt     { return func(p *policy) { p.Spec.Preemption = policyv1alpha1.PreemptAlways } }

var (
	kindOnly = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	byName   = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}
	byLabel  = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}}
	other    = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "StatefulSet"}
)

func TestChoose(t *testing.T) {
	obj := deployment("nginx", map[string]string{"app": "nginx"})
	for name, tc := range map[string]struct {
		pps, cpps []*policy
		current   *policy
		want      string // "" = none
	}{
		"none":                    {pps: []*policy{pol("a", false, other)}, want: ""},
		"name beats label":        {pps: []*policy{pol("a", false, byLabel), pol("b", false, byName)}, want: "pp/default/b"},
		"label beats kind":        {pps: []*policy{pol("a", false, kindOnly), pol("b", false, byLabel)}, want: "pp/default/b"},
		"explicit priority wins":  {pps: []*policy{pol("a", false, kindOnly, prio(5)), pol("b", false, byName)}, want: "pp/default/a"},
		"tie by name":             {pps: []*policy{pol("b", false, kindOnly), pol("a", false, kindOnly)}, want: "pp/default/a"},
		"pp beats cpp":            {pps: []*policy{pol("a", false, kindOnly)}, cpps: []*policy{pol("c", true, byName, prio(10))}, want: "pp/default/a"},
		"cpp when no pp":          {pps: []*policy{pol("a", false, other)}, cpps: []*policy{pol("c", true, byName)}, want: "cpp/c"},
		"claim sticks":            {pps: []*policy{pol("a", false, kindOnly), pol("b", false, byName, prio(3))}, current: pol("a", false, kindOnly), want: "pp/default/a"},
		"preemption by priority":  {pps: []*policy{pol("a", false, kindOnly), pol("b", false, byName, prio(3), preempt())}, current: pol("a", false, kindOnly), want: "pp/default/b"},
		"no preemption of higher": {pps: []*policy{pol("a", false, kindOnly, prio(5)), pol("b", false, byName, prio(3), preempt())}, current: pol("a", false, kindOnly, prio(5)), want: "pp/default/a"},
		"pp preempts any cpp":     {pps: []*policy{pol("b", false, byName, preempt())}, cpps: []*policy{pol("c", true, kindOnly, prio(9))}, current: pol("c", true, kindOnly, prio(9)), want: "pp/default/b"},
		"stale claim replaced":    {pps: []*policy{pol("b", false, byName)}, current: pol("a", false, other), want: "pp/default/b"},
		"cpp preempts lower cpp":  {cpps: []*policy{pol("c", true, kindOnly), pol("d", true, byName, prio(2), preempt())}, current: pol("c", true, kindOnly), want: "cpp/d"},
		"cpp never preempts pp":   {pps: []*policy{pol("a", false, kindOnly)}, cpps: []*policy{pol("d", true, byName, prio(9), preempt())}, current: pol("a", false, kindOnly), want: "pp/default/a"},
		"equal priority keeps":    {pps: []*policy{pol("a", false, kindOnly, prio(3)), pol("b", false, byName, prio(3), preempt())}, current: pol("a", false, kindOnly, prio(3)), want: "pp/default/a"},
		"never does not preempt":  {pps: []*policy{pol("a", false, kindOnly), pol("b", false, byName, prio(7))}, current: pol("a", false, kindOnly), want: "pp/default/a"},
	} {
		got, ok := choose(tc.pps, tc.cpps, obj, tc.current)
		gotKey := ""
		if ok {
			gotKey = got.Key()
		}
		if gotKey != tc.want {
			t.Errorf("%s: chose %q, want %q", name, gotKey, tc.want)
		}
	}
}

func TestReservedNamespace(t *testing.T) {
	for ns, want := range map[string]bool{"karmada-system": true, "karmada-cluster": true, "karmada-es-member1": true,
		"kube-system": true, "kube-public": true, "default": false, "prod": false} {
		if got := names.ReservedNamespace(ns); got != want {
			t.Errorf("%s: %v", ns, got)
		}
	}
}

func TestMetaPatch(t *testing.T) {
	p := pol("a", false, kindOnly)
	l, a := claimMeta(p)
	cur := map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "a-id"}
	annos := map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "default", policyv1alpha1.PropagationPolicyNameAnnotation: "a"}
	if patch := metaPatch(cur, annos, l, a); patch != nil {
		t.Errorf("claim present: patch %s", patch)
	}
	cur[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] = "x"
	if patch := metaPatch(cur, annos, l, a); patch == nil {
		t.Error("stale CPP claim label not removed")
	}
}

func TestPreempts(t *testing.T) {
	obj := deployment("nginx", map[string]string{"app": "nginx"})
	a, b := pol("a", false, kindOnly), pol("b", false, byName, prio(3), preempt())
	c := pol("c", true, kindOnly)
	for name, tc := range map[string]struct {
		chosen, current *policy
		want            bool
		msg             string
	}{
		"first claim":  {chosen: a, want: false},
		"same policy":  {chosen: a, current: a, want: false},
		"stale claim":  {chosen: b, current: pol("x", false, other), want: false},
		"pp over pp":   {chosen: b, current: a, want: true, msg: "Propagation policy(default/b) preempted propagation policy(default/a) successfully"},
		"pp over cpp":  {chosen: b, current: c, want: true, msg: "Propagation policy(default/b) preempted cluster propagation policy(c) successfully"},
		"cpp over cpp": {chosen: pol("d", true, byName, prio(2), preempt()), current: c, want: true, msg: "Cluster propagation policy(d) preempted cluster propagation policy(c) successfully"},
	} {
		if got := preempts(tc.chosen, tc.current, obj); got != tc.want {
			t.Errorf("%s: preempts %v, want %v", name, got, tc.want)
		}
		if tc.msg != "" {
			if got := preemptMessage(tc.chosen, tc.current, nil); got != tc.msg {
				t.Errorf("%s: message %q, want %q", name, got, tc.msg)
			}
		}
	}
}

func TestLazyWaits(t *testing.T) {
	lazy := pol("l", false, kindOnly, func(p *policy) { p.Spec.ActivationPreference = policyv1alpha1.LazyActivation })
	eager := pol("e", false, kindOnly)
	for name, tc := range map[string]struct {
		p       *policy
		changed bool
		want    bool
	}{
		// A policy change, a first match of an existing template, or a
		// preemption: the binding waits.
		"lazy, template unchanged":   {p: lazy, want: true},
		"lazy, template changed":     {p: lazy, changed: true},
		"immediate never waits":      {p: eager},
		"immediate, template change": {p: eager, changed: true},
	} {
		if got := lazyWaits(tc.p, tc.changed); got != tc.want {
			t.Errorf("%s: lazyWaits %v, want %v", name, got, tc.want)
		}
	}
}

// A policy's apply annotations go to its bindings (not to its templates);
// those it lacks, or an unclaimed binding, lose them.
func TestBindingMetaApply(t *testing.T) {
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a",
		Labels:      map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "a-id"},
		Annotations: map[string]string{flotillav1alpha1.ApplyModeAnnotation: "IfNotDrifted", "unrelated": "x"}}}
	p := fromPP(pp)
	_, annos := bindingMeta(p)
	if annos[flotillav1alpha1.ApplyModeAnnotation] != "IfNotDrifted" || annos[flotillav1alpha1.TakeOverAnnotation] != nil {
		t.Errorf("binding annotations %v, want the mode and no take-over", annos)
	}
	if _, ok := annos["unrelated"]; ok {
		t.Error("an unrelated policy annotation reached the binding")
	}
	if _, templateAnnos := claimMeta(p); templateAnnos[flotillav1alpha1.ApplyModeAnnotation] != nil {
		t.Error("the template is given the apply mode")
	}
	cur := map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "default", policyv1alpha1.PropagationPolicyNameAnnotation: "a"}
	l, a := bindingMeta(p)
	if metaPatch(map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "a-id"}, cur, l, a) == nil {
		t.Error("a binding without the policy's apply mode is not patched")
	}
	_, un := unclaimBindingMeta()
	if v, ok := un[flotillav1alpha1.ApplyModeAnnotation]; !ok || v != nil {
		t.Errorf("unclaiming leaves the apply mode: %v", un)
	}
}
