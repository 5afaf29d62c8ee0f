package addons

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorfake "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/fake"
)

func TestListAddons(t *testing.T) {
	t.Parallel()
	svc := func(name string, ok apiregistrationv1.ConditionStatus) *apiregistrationv1.APIService {
		return &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: ok}}}}
	}
	c := aggregatorfake.NewSimpleClientset(svc("v1alpha1.search.karmada.io", apiregistrationv1.ConditionTrue),
		svc("v1beta1.metrics.k8s.io", apiregistrationv1.ConditionTrue), svc("v1beta2.custom.metrics.k8s.io", apiregistrationv1.ConditionFalse))
	var out bytes.Buffer
	if err := listAddons(t.Context(), c, &out); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`(?m)^karmada-search\s+enabled\s`, `(?m)^karmada-metrics-adapter\s+disabled\s`, `(?m)^karmada-descheduler\s+built in\s+.*--controllers`} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("addons list does not match %s:\n%s", re, out.String())
		}
	}
	if err := Toggle("enable", "karmada-descheduler"); err == nil || !strings.Contains(err.Error(), "--controllers=*,descheduler") {
		t.Errorf("addons enable karmada-descheduler: %v", err)
	}
	if err := Toggle("disable", "nope"); err == nil || !strings.Contains(err.Error(), `unknown addon "nope"`) {
		t.Errorf("addons disable nope: %v", err)
	}
}
