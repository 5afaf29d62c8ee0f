package membership

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/names"
)

const (
	testMemberUID = "11111111-kube-system-member1"
	testEndpoint  = "https://member1.example:6443"
	testProxyURL  = "socks5://proxy.example:1080"
)

var (
	testToken             = []byte("token-of-karmada-member1")
	testImpersonatorToken = []byte("token-of-karmada-impersonator")
	testTokenCA           = []byte("ca.crt-of-the-token-controller")
	testKubeconfigCA      = []byte("ca-of-the-member-kubeconfig")
)

// env is a member and a control plane backed by fake clientsets.
type env struct {
	member    *kubefake.Clientset
	cpKube    *kubefake.Clientset
	cpKarmada *karmadafake.Clientset
	m         *memberCluster
	cp        controlplane.Clients
}

// tokenController says how the fake member fills token secrets.
type tokenController int

const (
	tokensOnCreate      tokenController = iota // filled when created, with ca.crt
	tokensOnCreateNoCA                         // filled when created, without ca.crt
	tokensAfterTwoReads                        // filled on the second read
	tokensNever                                // never filled
)

// newEnv returns a fresh member (with its kube-system namespace and the
// given objects) and control plane (with the given objects). Created
// objects get a uid, as an API server would give them.
func newEnv(t *testing.T, tc tokenController, memberObjs []runtime.Object, cpObjs ...runtime.Object) *env {
	t.Helper()
	memberObjs = append(memberObjs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: testMemberUID}})
	var kubeObjs, karmadaObjs []runtime.Object
	for _, o := range cpObjs {
		if _, ok := o.(*clusterv1alpha1.Cluster); ok {
			karmadaObjs = append(karmadaObjs, o)
		} else {
			kubeObjs = append(kubeObjs, o)
		}
	}
	e := &env{
		member: kubefake.NewClientset(memberObjs...),
		cpKube: kubefake.NewClientset(kubeObjs...),
		// Not NewClientset: its field-managed tracker needs the OpenAPI
		// schema, which apis/generated/applyconfiguration was generated without.
		cpKarmada: karmadafake.NewSimpleClientset(karmadaObjs...),
	}
	for _, f := range []*clienttesting.Fake{&e.member.Fake, &e.cpKube.Fake, &e.cpKarmada.Fake} {
		f.PrependReactor("create", "*", assignUID)
	}
	fakeTokenController(t, e.member, tc)
	e.m = &memberCluster{kube: e.member, endpoint: testEndpoint, caData: testKubeconfigCA, proxyURL: testProxyURL}
	e.cp = controlplane.Clients{Kube: e.cpKube, Karmada: e.cpKarmada}
	return e
}

var uidCounter atomic.Int64

func assignUID(action clienttesting.Action) (bool, runtime.Object, error) {
	obj, err := meta.Accessor(action.(clienttesting.CreateAction).GetObject())
	if err == nil && obj.GetUID() == "" {
		obj.SetUID(types.UID(fmt.Sprintf("uid-%d", uidCounter.Add(1))))
	}
	return false, nil, nil
}

func tokenFor(sa string) []byte {
	if sa == impersonatorServiceAccount {
		return testImpersonatorToken
	}
	return testToken
}

// fakeTokenController fills the token secrets of the fake member the way
// kube-controller-manager's token controller does.
func fakeTokenController(t *testing.T, member *kubefake.Clientset, tc tokenController) {
	fill := func(s *corev1.Secret) {
		if s.Type != corev1.SecretTypeServiceAccountToken {
			return
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[corev1.ServiceAccountTokenKey] = tokenFor(s.Annotations[corev1.ServiceAccountNameKey])
		s.Data[corev1.ServiceAccountNamespaceKey] = []byte(s.Namespace)
		if tc != tokensOnCreateNoCA {
			s.Data[corev1.ServiceAccountRootCAKey] = testTokenCA
		}
	}
	switch tc {
	case tokensOnCreate, tokensOnCreateNoCA:
		member.PrependReactor("create", "secrets", func(action clienttesting.Action) (bool, runtime.Object, error) {
			fill(action.(clienttesting.CreateAction).GetObject().(*corev1.Secret))
			return false, nil, nil
		})
	case tokensAfterTwoReads:
		reads := map[string]int{}
		member.PrependReactor("get", "secrets", func(action clienttesting.Action) (bool, runtime.Object, error) {
			get := action.(clienttesting.GetAction)
			key := get.GetNamespace() + "/" + get.GetName()
			if reads[key]++; reads[key] < 2 {
				return false, nil, nil
			}
			gvr := corev1.SchemeGroupVersion.WithResource("secrets")
			obj, err := member.Tracker().Get(gvr, get.GetNamespace(), get.GetName())
			if err != nil {
				return false, nil, nil
			}
			s := obj.(*corev1.Secret).DeepCopy()
			if len(s.Data[corev1.ServiceAccountTokenKey]) == 0 {
				fill(s)
				if err := member.Tracker().Update(gvr, s, s.Namespace); err != nil {
					t.Errorf("fake token controller: %v", err)
				}
			}
			return false, nil, nil
		})
	}
}

// newJoin returns join options for member1 that wait briefly for tokens.
func newJoin() *JoinOptions {
	o := NewJoinOptions()
	o.ClusterName = "member1"
	o.token = tokenWait{timeout: 2 * time.Second, interval: 10 * time.Millisecond}
	o.Ready = ReadyWait{} // no status controller here; TestJoinWaitsForReady waits
	return o
}

// writes lists the writing actions recorded by fakes as
// "verb resource namespace/name" (or "verb resource name"), sorted.
func writes(fakes ...*clienttesting.Fake) []string {
	var out []string
	for _, f := range fakes {
		for _, a := range f.Actions() {
			name, ns := "", a.GetNamespace()
			switch a := a.(type) {
			case clienttesting.CreateAction: // and every UpdateAction: both carry the object
				if o, err := meta.Accessor(a.GetObject()); err == nil {
					name = o.GetName()
				}
			case clienttesting.DeleteAction:
				name = a.GetName()
			case clienttesting.PatchAction:
				name = a.GetName()
			default:
				continue
			}
			if ns != "" {
				name = ns + "/" + name
			}
			verb := a.GetVerb()
			if sub := a.GetSubresource(); sub != "" {
				verb += "/" + sub
			}
			out = append(out, verb+" "+a.GetResource().Resource+" "+name)
		}
	}
	sort.Strings(out)
	return out
}

func (e *env) fakes() []*clienttesting.Fake {
	return []*clienttesting.Fake{&e.member.Fake, &e.cpKube.Fake, &e.cpKarmada.Fake}
}

func (e *env) clearActions() {
	for _, f := range e.fakes() {
		f.ClearActions()
	}
}

func ourLabels() map[string]string {
	return map[string]string{names.SystemLabel: "true", names.ManagedByLabel: controlplane.UserAgent}
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}
