package overrides

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

const digest = "sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c"

func TestParseImage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		image   string
		want    imageRef
		wantErr bool
	}{
		{image: "myapp:1.0.0", want: imageRef{repository: "myapp", tag: "1.0.0"}},
		{image: "nginx", want: imageRef{repository: "nginx"}},
		{image: "library/nginx:1.25", want: imageRef{repository: "library/nginx", tag: "1.25"}},
		{image: "registry.k8s.io/pause:3.9", want: imageRef{registry: "registry.k8s.io", repository: "pause", tag: "3.9"}},
		{image: "localhost/app", want: imageRef{registry: "localhost", repository: "app"}},
		{image: "myhost:5000/team/app:v1", want: imageRef{registry: "myhost:5000", repository: "team/app", tag: "v1"}},
		{image: "app@" + digest, want: imageRef{repository: "app", digest: digest}},
		// As in Karmada, the tag wins and the digest is dropped.
		{image: "app:v1@" + digest, want: imageRef{repository: "app", tag: "v1"}},
		{image: "", wantErr: true},
		{image: "App:v1", wantErr: true},
		{image: "app:", wantErr: true},
		{image: "app@sha256:12", wantErr: true},
	} {
		t.Run(tc.image, func(t *testing.T) {
			t.Parallel()
			got, err := parseImage(tc.image)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(imageRef{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOverrideImage(t *testing.T) {
	t.Parallel()
	const full = "fictional.registry.example/imagename:v1.0.0"
	for _, tc := range []struct {
		name      string
		image     string
		component policyv1alpha1.ImageComponent
		operator  policyv1alpha1.OverriderOperator
		value     string
		want      string
		wantErr   bool
	}{
		{"registry add without registry", "myapp:1.0.0", policyv1alpha1.Registry, policyv1alpha1.OverriderOpAdd, "test-repo", "test-repo/myapp:1.0.0", false},
		{"registry add appends", full, policyv1alpha1.Registry, policyv1alpha1.OverriderOpAdd, ".test", "fictional.registry.example.test/imagename:v1.0.0", false},
		{"registry replace", full, policyv1alpha1.Registry, policyv1alpha1.OverriderOpReplace, "fictional.registry.us", "fictional.registry.us/imagename:v1.0.0", false},
		{"registry remove", full, policyv1alpha1.Registry, policyv1alpha1.OverriderOpRemove, "", "imagename:v1.0.0", false},
		{"registry remove keeps non-host path", "library/nginx:1.25", policyv1alpha1.Registry, policyv1alpha1.OverriderOpRemove, "", "library/nginx:1.25", false},
		{"repository add appends", full, policyv1alpha1.Repository, policyv1alpha1.OverriderOpAdd, "/nginx", "fictional.registry.example/imagename/nginx:v1.0.0", false},
		{"repository replace", full, policyv1alpha1.Repository, policyv1alpha1.OverriderOpReplace, "nginx", "fictional.registry.example/nginx:v1.0.0", false},
		{"repository remove leaves the separator", full, policyv1alpha1.Repository, policyv1alpha1.OverriderOpRemove, "", "fictional.registry.example/:v1.0.0", false},
		{"tag add appends", "myapp:1.0.0", policyv1alpha1.Tag, policyv1alpha1.OverriderOpAdd, "-debug", "myapp:1.0.0-debug", false},
		{"tag add without tag sets it", "myapp", policyv1alpha1.Tag, policyv1alpha1.OverriderOpAdd, "v2", "myapp:v2", false},
		{"tag add making an invalid tag is ignored", full, policyv1alpha1.Tag, policyv1alpha1.OverriderOpAdd, digest, full, false},
		{"tag replace", full, policyv1alpha1.Tag, policyv1alpha1.OverriderOpReplace, "v2", "fictional.registry.example/imagename:v2", false},
		{"tag replace with digest", full, policyv1alpha1.Tag, policyv1alpha1.OverriderOpReplace, digest, "fictional.registry.example/imagename@" + digest, false},
		{"tag replace with invalid value is ignored", full, policyv1alpha1.Tag, policyv1alpha1.OverriderOpReplace, "-bad", full, false},
		{"tag remove", full, policyv1alpha1.Tag, policyv1alpha1.OverriderOpRemove, "", "fictional.registry.example/imagename", false},
		{"digest remove", "app@" + digest, policyv1alpha1.Tag, policyv1alpha1.OverriderOpRemove, "", "app", false},
		{"unknown component", full, "Name", policyv1alpha1.OverriderOpReplace, "x", "", true},
		{"invalid image", "Not An Image", policyv1alpha1.Tag, policyv1alpha1.OverriderOpReplace, "x", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := overrideImage(tc.image, &policyv1alpha1.ImageOverrider{Component: tc.component, Operator: tc.operator, Value: tc.value})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestApplyImageKinds(t *testing.T) {
	t.Parallel()
	template := []string{"spec", "template", "spec", "containers"}
	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		path []string
		want string
	}{
		{workload(t, "v1", "Pod", "spec", "containers"), []string{"spec", "containers"}, "test-repo/myapp:1.0.0"},
		{workload(t, "apps/v1", "ReplicaSet", template...), template, "test-repo/myapp:1.0.0"},
		{workload(t, "apps/v1", "Deployment", template...), template, "test-repo/myapp:1.0.0"},
		{workload(t, "apps/v1", "DaemonSet", template...), template, "test-repo/myapp:1.0.0"},
		{workload(t, "apps/v1", "StatefulSet", template...), template, "test-repo/myapp:1.0.0"},
		{workload(t, "batch/v1", "Job", template...), template, "test-repo/myapp:1.0.0"},
		// CronJob is not one of the kinds Karmada knows.
		{workload(t, "batch/v1", "CronJob", "spec", "jobTemplate", "spec", "template", "spec", "containers"),
			[]string{"spec", "jobTemplate", "spec", "template", "spec", "containers"}, "myapp:1.0.0"},
		{workload(t, "example.io/v1", "Custom", template...), template, "myapp:1.0.0"},
	} {
		t.Run(tc.obj.GetKind(), func(t *testing.T) {
			t.Parallel()
			err := applyImage(tc.obj, &policyv1alpha1.ImageOverrider{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpAdd, Value: "test-repo"})
			if err != nil {
				t.Fatal(err)
			}
			cs, _, err := unstructured.NestedSlice(tc.obj.Object, tc.path...)
			if err != nil || len(cs) != 1 {
				t.Fatalf("containers %v, %v", cs, err)
			}
			if got := cs[0].(map[string]any)["image"]; got != tc.want {
				t.Errorf("image = %v, want %s", got, tc.want)
			}
		})
	}
}

func TestApplyImage(t *testing.T) {
	t.Parallel()
	images := func(t *testing.T, obj *unstructured.Unstructured) []string {
		t.Helper()
		var out []string
		for _, f := range []string{"initContainers", "containers"} {
			cs, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", f)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				out = append(out, c.(map[string]any)["image"].(string))
			}
		}
		return out
	}
	pred := func(p string) *policyv1alpha1.ImagePredicate { return &policyv1alpha1.ImagePredicate{Path: p} }
	for _, tc := range []struct {
		name    string
		o       policyv1alpha1.ImageOverrider
		want    []string
		wantErr bool
	}{
		{
			name: "every container, not init containers",
			o:    policyv1alpha1.ImageOverrider{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "v2"},
			want: []string{"busybox:1.36", "myapp:v2", "registry.k8s.io/pause:v2"},
		},
		{
			name: "predicate selects exactly one image",
			o: policyv1alpha1.ImageOverrider{Predicate: pred("/spec/template/spec/initContainers/0/image"),
				Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "mirror.io"},
			want: []string{"mirror.io/busybox:1.36", "myapp:1.0.0", "registry.k8s.io/pause:3.9"},
		},
		{
			name: "predicate on the second container",
			o: policyv1alpha1.ImageOverrider{Predicate: pred("/spec/template/spec/containers/1/image"),
				Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpRemove},
			want: []string{"busybox:1.36", "myapp:1.0.0", "pause:3.9"},
		},
		{
			name: "predicate path missing",
			o: policyv1alpha1.ImageOverrider{Predicate: pred("/spec/template/spec/containers/2/image"),
				Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "v2"},
			wantErr: true,
		},
		{
			name: "predicate path not a pointer",
			o: policyv1alpha1.ImageOverrider{Predicate: pred("spec/template"),
				Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "v2"},
			wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := deployment()
			err := applyImage(obj, &tc.o)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, images(t, obj)); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyImageWithoutImage(t *testing.T) {
	t.Parallel()
	obj := workload(t, "v1", "Pod", "spec", "containers")
	unstructured.RemoveNestedField(obj.Object, "spec", "containers")
	if err := unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"name": "app"}}, "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if err := applyImage(obj, &policyv1alpha1.ImageOverrider{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpRemove}); err == nil {
		t.Error("container without image: no error")
	}
}
