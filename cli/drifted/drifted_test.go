package drifted

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

var (
	found = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	image = workv1alpha1.DriftedField{Path: "spec.template.spec.containers[name=nginx].image", ValueInMember: `"nginx:9.9"`, ValueApplied: `"nginx:1.27"`}
)

// work is a Work in cluster's execution namespace with one manifest per
// object ("kind/namespace/name"), the first drifted in image.
func work(cluster, name string, open bool, objects ...string) workv1alpha1.Work {
	w := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-" + cluster, Name: name}}
	status := metav1.ConditionFalse
	if open {
		status = metav1.ConditionTrue
	}
	w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkDrifted, Status: status, LastTransitionTime: metav1.NewTime(found)}}
	for i, o := range objects {
		p := strings.Split(o, "/")
		ms := workv1alpha1.ManifestStatus{Identifier: workv1alpha1.ResourceIdentifier{Ordinal: i, Group: "apps", Version: "v1", Kind: p[0], Namespace: p[1], Name: p[2]}}
		if i == 0 {
			ms.Drift = []workv1alpha1.DriftedField{image}
		}
		w.Status.ManifestStatuses = append(w.Status.ManifestStatuses, ms)
	}
	return w
}

func TestCollect(t *testing.T) {
	t.Parallel()
	works := []workv1alpha1.Work{
		work("member2", "w1", true, "Deployment/default/web", "Deployment/default/api"),
		work("member1", "w2", false, "Deployment/default/web"),
		work("member1", "w3", false, "Deployment/prod/db"),
		work("member1", "w4", false),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "not-in-an-execution-namespace"}},
	}
	// list serves works two per page, from the namespace asked.
	var asked []string
	list := func(namespace string) ListFunc {
		asked = append(asked, namespace)
		return func(_ context.Context, opts metav1.ListOptions) (*workv1alpha1.WorkList, error) {
			var in []workv1alpha1.Work
			for _, w := range works {
				if namespace == "" || w.Namespace == namespace {
					in = append(in, w)
				}
			}
			start := 0
			if opts.Continue != "" {
				start = int(opts.Continue[0] - '0')
			}
			end := min(start+2, len(in))
			page := &workv1alpha1.WorkList{Items: in[start:end]}
			if end < len(in) {
				page.Continue = string(rune('0' + end))
			}
			return page, nil
		}
	}
	for _, tc := range []struct {
		name       string
		filter     Filter
		want       []string
		wantListed []string
	}{
		{"one namespace", Filter{Namespace: "default"}, []string{"member1 default/web Corrected", "member2 default/web Open"}, []string{""}},
		{"every namespace", Filter{AllNamespaces: true}, []string{"member1 default/web Corrected", "member1 prod/db Corrected", "member2 default/web Open"}, []string{""}},
		{"one cluster: its execution namespace only", Filter{AllNamespaces: true, Clusters: []string{"member2"}}, []string{"member2 default/web Open"}, []string{"karmada-es-member2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			entries, err := Collect(context.Background(), list, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Cluster+" "+e.Namespace+"/"+e.Name+" "+e.State)
				if len(e.Fields) != 1 || e.Fields[0] != image || e.Kind != "Deployment" || e.APIVersion != "apps/v1" || !e.Since.Time.Equal(found) {
					t.Errorf("entry %+v", e)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantListed, asked); diff != "" {
				t.Errorf("namespaces listed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrint(t *testing.T) {
	t.Parallel()
	w := work("member2", "w1", true, "Deployment/default/web")
	entries := Entries(&w, Filter{Namespace: "default"})
	now := found.Add(90 * time.Second)
	for _, tc := range []struct {
		output        string
		withNamespace bool
		want          string
	}{
		{"", false, "CLUSTER   KIND         NAME   STATE   FIELDS                                            AGE\n" +
			"member2   Deployment   web    Open    spec.template.spec.containers[name=nginx].image   90s\n"},
		{"wide", true, "CLUSTER   KIND         NAMESPACE   NAME   STATE   FIELDS                                                                               AGE\n" +
			"member2   Deployment   default     web    Open    spec.template.spec.containers[name=nginx].image=\"nginx:9.9\" (applied \"nginx:1.27\")   90s\n"},
		{"yaml", false, `- apiVersion: apps/v1
  cluster: member2
  fields:
  - path: spec.template.spec.containers[name=nginx].image
    valueApplied: '"nginx:1.27"'
    valueInMember: '"nginx:9.9"'
  kind: Deployment
  name: web
  namespace: default
  since: "2026-11-01T10:00:00Z"
  state: Open
  work: karmada-es-member2/w1
`},
	} {
		var b bytes.Buffer
		if err := Print(&b, entries, tc.output, tc.withNamespace, now); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, b.String()); diff != "" {
			t.Errorf("-o %q (-want +got):\n%s", tc.output, diff)
		}
	}
	if err := Print(&bytes.Buffer{}, entries, "xml", false, now); err == nil {
		t.Error("-o xml printed")
	}
}
