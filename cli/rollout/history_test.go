package rollout

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

func TestHistory(t *testing.T) {
	t.Parallel()
	revs := func(t *testing.T) []runtime.Object {
		other := revision(t, 99, "0ther", content(1, "nginx:1.0", nil))
		other.Name, other.Labels[flotillav1alpha1.BindingLabel] = "other-deployment-0ther", "other-deployment"
		return []runtime.Object{
			other,
			revision(t, 10, "f00d", content(3, "nginx:1.27", map[string]any{"kubernetes.io/change-cause": "kubectl set image deployment/nginx nginx=nginx:1.27"})),
			revision(t, 2, "b0b0", content(2, "nginx:1.26", nil)),
			revision(t, 9, "cafe", content(2, "nginx:1.26", map[string]any{"other": "x"})),
		}
	}
	for _, tc := range []struct {
		name      string
		template  bool
		revisions func(*testing.T) []runtime.Object
		revision  int64
		want      string
		wantErr   string
	}{{
		name: "table sorted by revision", template: true, revisions: revs,
		want: `deployment.apps/nginx
REVISION  HASH  CHANGE-CAUSE
2         b0b0  <none>
9         cafe  <none>
10        f00d  kubectl set image deployment/nginx nginx=nginx:1.27
`,
	}, {
		name: "one revision's template", template: true, revisions: revs, revision: 2,
		want: `deployment.apps/nginx with revision #2
apiVersion: apps/v1
kind: Deployment
metadata:
  generation: 1
  labels:
    app: nginx
spec:
  replicas: 2
  template:
    spec:
      containers:
      - image: nginx:1.26
        name: nginx
`,
	}, {
		name: "unknown revision", template: true, revisions: revs, revision: 3, wantErr: "unable to find revision 3 of deployment/nginx",
	}, {
		name: "no revisions", template: true, revisions: func(*testing.T) []runtime.Object { return nil }, wantErr: "no rollout history found for deployment/nginx",
	}, {
		name: "no template", revisions: revs, wantErr: `deployments.apps "nginx" not found`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, template(tc.template), tc.revisions(t)...)
			err := f.History(context.Background(), tc.revision)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.out.String() != tc.want {
				t.Errorf("output\n%s\nwant\n%s", f.out.String(), tc.want)
			}
		})
	}
}
