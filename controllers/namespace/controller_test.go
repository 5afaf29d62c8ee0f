package namespace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSkip(t *testing.T) {
	c := &Controller{}
	var err error
	if c, err = newSkipper([]string{DefaultSkippedPattern, "team-.*-tmp"}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		labels map[string]string
		want   bool
	}{
		"prod":               {nil, false},
		"default":            {nil, true},
		"kube-system":        {nil, true},
		"kube-public":        {nil, true},
		"my-kube-ns":         {nil, false},
		"karmada-system":     {nil, true},
		"karmada-cluster":    {nil, true},
		"karmada-es-member1": {nil, true},
		"team-a-tmp":         {nil, true},
		"labelled":           {map[string]string{"namespace.karmada.io/skip-auto-propagation": "true"}, true},
		"claimed":            {map[string]string{"clusterpropagationpolicy.karmada.io/permanent-id": "x"}, true},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: tc.labels}}
		if got := c.Skip(ns); got != tc.want {
			t.Errorf("%s: skip %v, want %v", name, got, tc.want)
		}
	}
	if _, err := newSkipper([]string{"("}); err == nil {
		t.Error("bad pattern accepted")
	}
}
