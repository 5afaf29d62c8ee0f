package promote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/cli/policy"
	"github.com/flotilla-io/flotilla/interpreter"
)

// fakeMember serves objects by "kind namespace/name" (kind as the
// command line gives it, lower case), or "kind name" for a cluster-scoped
// kind, whatever the namespace asked.
type fakeMember map[string]*unstructured.Unstructured

func (m fakeMember) Get(_ context.Context, kind, namespace, name string) (*unstructured.Unstructured, error) {
	for _, key := range []string{kind + " " + cache.NewObjectName(namespace, name).String(), kind + " " + name} {
		if o, ok := m[key]; ok {
			return o.DeepCopy(), nil
		}
	}
	return nil, fmt.Errorf("%s %q not found in cluster(member1)", kind, cache.NewObjectName(namespace, name).String())
}

func (m fakeMember) Dependency(_ context.Context, ref interpreter.DependentObjectReference) ([]*unstructured.Unstructured, error) {
	if o, ok := m[strings.ToLower(ref.Kind)+" "+cache.NewObjectName(ref.Namespace, ref.Name).String()]; ok {
		return []*unstructured.Unstructured{o.DeepCopy()}, nil
	}
	return nil, nil
}

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ppGVR          = schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}
	cppGVR         = schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "clusterpropagationpolicies"}
	rolesGVR       = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
)

func controlPlaneMapper() meta.RESTMapper {
	m := testMapper().(*meta.DefaultRESTMapper)
	m.Add(schema.GroupVersionKind{Group: "policy.karmada.io", Version: "v1alpha1", Kind: "PropagationPolicy"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Group: "policy.karmada.io", Version: "v1alpha1", Kind: "ClusterPropagationPolicy"}, meta.RESTScopeRoot)
	return m
}

// stored lists the control plane's objects as "resource namespace/name".
func stored(t *testing.T, c *dynamicfake.FakeDynamicClient) []string {
	t.Helper()
	var out []string
	for _, gvr := range []schema.GroupVersionResource{deploymentsGVR, configMapsGVR, ppGVR, cppGVR, rolesGVR} {
		list, err := c.Resource(gvr).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list.Items {
			out = append(out, gvr.Resource+" "+cache.NewObjectName(o.GetNamespace(), o.GetName()).String())
		}
	}
	sort.Strings(out)
	return out
}

func TestPromoterRun(t *testing.T) {
	t.Parallel()
	deploy := object(t, memberDeployment)
	cm := object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: web-config, namespace: shop, uid: u, resourceVersion: "5"}, data: {k: v}}`)
	secret := object(t, `{apiVersion: v1, kind: Secret, metadata: {name: web-secret, namespace: shop}, data: {password: cHc=}}`)
	role := object(t, `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: reader, uid: u}, rules: []}`)
	member := fakeMember{"deployment shop/web": deploy, "configmap shop/web-config": cm, "secret shop/web-secret": secret, "clusterrole reader": role}
	pp := policy.Name("shop", "web", deploy.GroupVersionKind())
	cpp := policy.Name("", "reader", role.GroupVersionKind())
	deps := func(obj *unstructured.Unstructured) ([]interpreter.DependentObjectReference, error) {
		d, err := NewDependencies(nil, func(string) {})
		if err != nil {
			return nil, err
		}
		return d.Of(obj)
	}
	existing := func(objs ...string) []runtime.Object {
		var out []runtime.Object
		for _, y := range objs {
			out = append(out, object(t, y))
		}
		return out
	}

	for _, tc := range []struct {
		name       string
		opts       Options
		existing   []runtime.Object
		failCreate string // resource whose create fails
		wantErr    string
		wantOut    []string // lines of Out, each contained in order
		wantErrOut []string
		wantStored []string
	}{
		{
			name:       "a deployment: its template and policy",
			opts:       Options{Kind: "deployment", Name: "web", Namespace: "shop", Cluster: "member1"},
			wantOut:    []string{`Resource "apps/v1, Resource=deployments"(shop/web) is promoted successfully`},
			wantStored: []string{"deployments shop/web", "propagationpolicies shop/" + pp},
		},
		{
			name:       "a cluster role: a cluster propagation policy",
			opts:       Options{Kind: "clusterrole", Name: "reader", Namespace: "shop", Cluster: "member1"},
			wantOut:    []string{`Resource "rbac.authorization.k8s.io/v1, Resource=clusterroles"(reader) is promoted successfully`},
			wantStored: []string{"clusterpropagationpolicies " + cpp, "clusterroles reader"},
		},
		{
			name:     "already in the control plane: karmadactl's line, nothing created",
			opts:     Options{Kind: "deployment", Name: "web", Namespace: "shop", Cluster: "member1", Dependencies: true},
			existing: existing(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: shop}}`),
			wantOut: []string{`Resource "apps/v1, Resource=deployments"(shop/web) already exist in karmada control plane, ` +
				`you can edit PropagationPolicy and OverridePolicy to propagate it`},
			wantStored: []string{"deployments shop/web"},
		},
		{
			name:       "the policy exists: karmadactl's error, nothing created",
			opts:       Options{Kind: "deployment", Name: "web", Namespace: "shop", Cluster: "member1"},
			existing:   existing(fmt.Sprintf(`{apiVersion: policy.karmada.io/v1alpha1, kind: PropagationPolicy, metadata: {name: %s, namespace: shop}}`, pp)),
			wantErr:    fmt.Sprintf("the PropagationPolicy(shop/%s) already exist, please edit it to propagate resource", pp),
			wantStored: []string{"propagationpolicies shop/" + pp},
		},
		{
			name:     "dependencies: created first, an existing one left alone, a missing one warned about",
			opts:     Options{Kind: "deployment", Name: "web", Namespace: "shop", Cluster: "member1", Dependencies: true},
			existing: existing(`{apiVersion: v1, kind: Secret, metadata: {name: web-secret, namespace: shop}}`),
			wantOut: []string{
				`Resource "/v1, Resource=configmaps"(shop/web-config) is promoted successfully`,
				`Resource "/v1, Resource=secrets"(shop/web-secret) already exist in karmada control plane`,
				`Resource "apps/v1, Resource=deployments"(shop/web) is promoted successfully`,
			},
			wantErrOut: []string{
				"Warning: ServiceAccount shop/web, a dependency of Deployment shop/web, does not exist in cluster(member1): not promoted",
				"Warning: PersistentVolumeClaim shop/web-data",
				"[1/3] Promoting ConfigMap shop/web-config", "[2/3] Promoting Secret shop/web-secret", "[3/3] Promoting Deployment shop/web",
			},
			wantStored: []string{"configmaps shop/web-config", "deployments shop/web", "propagationpolicies shop/" + pp},
		},
		{
			name:       "a failure rolls back what the run created",
			opts:       Options{Kind: "deployment", Name: "web", Namespace: "shop", Cluster: "member1", Dependencies: true},
			failCreate: "propagationpolicies",
			wantErr:    "failed to create resource",
			wantErrOut: []string{`Rolled back: deleted "apps/v1, Resource=deployments"(shop/web)`, `Rolled back: deleted "/v1, Resource=configmaps"(shop/web-config)`},
		},
		{
			name:    "dry run: checked, nothing created",
			opts:    Options{Kind: "deployment", Name: "web", Namespace: "shop", Cluster: "member1", DryRun: true},
			wantOut: []string{`Resource "apps/v1, Resource=deployments"(shop/web) is promoted successfully (dry run)`},
		},
		{
			name: "-o yaml: the template and the policy printed, nothing created",
			opts: Options{Kind: "deployment", Name: "web", Namespace: "shop", Cluster: "member1", Output: "yaml"},
			wantOut: []string{"kind: Deployment", "work.karmada.io/conflict-resolution: overwrite", "---",
				"kind: PropagationPolicy", "name: " + pp, "- member1"},
		},
		{
			name:    "-o json",
			opts:    Options{Kind: "clusterrole", Name: "reader", Cluster: "member1", Output: "json"},
			wantOut: []string{`"kind": "ClusterRole"`, `"kind": "ClusterPropagationPolicy"`},
		},
		{name: "missing in the member", opts: Options{Kind: "deployment", Name: "gone", Namespace: "shop", Cluster: "member1"}, wantErr: `deployment "shop/gone" not found in cluster(member1)`},
		{name: "no cluster", opts: Options{Kind: "deployment", Name: "web", Namespace: "shop"}, wantErr: "-C/--cluster is required"},
		{name: "bad output", opts: Options{Kind: "deployment", Name: "web", Cluster: "member1", Output: "wide"}, wantErr: "output format is only one of json and yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			scheme := runtime.NewScheme()
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
				deploymentsGVR: "DeploymentList", configMapsGVR: "ConfigMapList", ppGVR: "PropagationPolicyList", cppGVR: "ClusterPropagationPolicyList",
				rolesGVR: "ClusterRoleList", {Version: "v1", Resource: "secrets"}: "SecretList",
			}, tc.existing...)
			if tc.failCreate != "" {
				client.PrependReactor("create", tc.failCreate, func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("injected failure")
				})
			}
			var out, errOut bytes.Buffer
			p := &Promoter{Member: member, ControlPlane: ControlPlane{Mapper: withSecrets(controlPlaneMapper()), Client: client}, Dependencies: deps, Out: &out, ErrOut: &errOut}
			err := p.Run(context.Background(), tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("error %v\nstderr: %s", err, errOut.String())
			}
			inOrder(t, "stdout", out.String(), tc.wantOut)
			for _, w := range tc.wantErrOut {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut.String())
				}
			}
			if got := stored(t, client); !cmp.Equal(got, tc.wantStored) {
				t.Errorf("control plane holds %v, want %v", got, tc.wantStored)
			}
		})
	}
}

func withSecrets(m meta.RESTMapper) meta.RESTMapper {
	m.(*meta.DefaultRESTMapper).Add(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, meta.RESTScopeNamespace)
	return m
}

// inOrder checks that text holds each of want, in that order.
func inOrder(t *testing.T, what, text string, want []string) {
	t.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s lacks %q (in order):\n%s", what, w, text)
			return
		}
		rest = rest[i+len(w):]
	}
}
