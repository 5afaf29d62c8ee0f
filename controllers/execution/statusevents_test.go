package execution

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

func TestStatusEvents(t *testing.T) {
	id := workv1alpha1.ResourceIdentifier{Kind: "Deployment", Namespace: "default", Name: "nginx"}
	ns := workv1alpha1.ResourceIdentifier{Kind: "Namespace", Name: "team"}
	ms := func(id workv1alpha1.ResourceIdentifier, status string, h workv1alpha1.ResourceHealth) workv1alpha1.ManifestStatus {
		m := workv1alpha1.ManifestStatus{Identifier: id, Health: h}
		if status != "" {
			m.Status = &runtime.RawExtension{Raw: []byte(status)}
		}
		return m
	}
	st := func(m ...workv1alpha1.ManifestStatus) *workv1alpha1.WorkStatus {
		return &workv1alpha1.WorkStatus{ManifestStatuses: m}
	}
	for name, tc := range map[string]struct {
		stored, status *workv1alpha1.WorkStatus
		want           []string
	}{
		"first status": {stored: st(), status: st(ms(id, `{"replicas":1}`, workv1alpha1.ResourceHealthy)), want: []string{
			"ReflectStatusSucceed: Reflect status for object(Deployment/default/nginx) succeed.",
			"InterpretHealthSucceed: Interpret health of object(Deployment/default/nginx) as healthy.",
		}},
		"same value other order": {stored: st(ms(id, `{"a":1,"b":2}`, workv1alpha1.ResourceHealthy)),
			status: st(ms(id, `{"b":2,"a":1}`, workv1alpha1.ResourceHealthy))},
		"health changes only": {stored: st(ms(id, `{"a":1}`, workv1alpha1.ResourceHealthy)),
			status: st(ms(id, `{"a":1}`, workv1alpha1.ResourceUnhealthy)),
			want:   []string{"InterpretHealthSucceed: Interpret health of object(Deployment/default/nginx) as unhealthy."}},
		"unknown health and no status say nothing": {stored: st(), status: st(ms(ns, "", workv1alpha1.ResourceUnknown))},
		"cluster-scoped name": {stored: st(), status: st(ms(ns, `{"phase":"Active"}`, workv1alpha1.ResourceUnknown)),
			want: []string{"ReflectStatusSucceed: Reflect status for object(Namespace/team) succeed."}},
	} {
		var got []string
		for _, e := range statusEvents(tc.stored, tc.status) {
			got = append(got, e.reason+": "+e.message)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", name, got, tc.want)
		}
	}
}
