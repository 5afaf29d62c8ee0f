package server

import (
	"crypto/x509"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes/fake"
)

// caContent is a CA provider whose bundle the test sets.
type caContent struct{ bundle []byte }

func (c *caContent) Name() string                   { return "test" }
func (c *caContent) CurrentCABundleContent() []byte { return c.bundle }
func (c *caContent) VerifyOptions() (x509.VerifyOptions, bool) {
	return x509.VerifyOptions{}, len(c.bundle) > 0
}
func (c *caContent) AddListener(dynamiccertificates.Listener) {}

func TestClientCALoaded(t *testing.T) {
	const clientCA, frontProxyCA = "-----CLIENT CA-----\n", "-----FRONT PROXY CA-----\n"
	authCM := func(ca string) runtime.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: authenticationConfigMap},
			Data: map[string]string{clientCAKey: ca}}
	}
	for name, tc := range map[string]struct {
		objects []runtime.Object
		bundles []string // the server's bundle at each check
		elapsed time.Duration
		want    []bool // ready at each check
	}{
		// The front proxy's CA is loaded at start, the client CA later;
		// once loaded, the check stays passed.
		"loaded later":       {[]runtime.Object{authCM(clientCA)}, []string{frontProxyCA, frontProxyCA + clientCA, ""}, 0, []bool{false, true, true}},
		"loaded at once":     {[]runtime.Object{authCM(clientCA)}, []string{clientCA + frontProxyCA}, 0, []bool{true}},
		"no client CA":       {[]runtime.Object{authCM("")}, []string{frontProxyCA}, 0, []bool{true}},
		"no ConfigMap":       {nil, []string{""}, 0, []bool{true}},
		"another CA forever": {[]runtime.Object{authCM(clientCA)}, []string{frontProxyCA}, 2 * clientCAGrace, []bool{true}},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Unix(1000, 0)
			clock := start
			ca := &caContent{}
			check := clientCALoaded(ca, fake.NewClientset(tc.objects...), func() time.Time { return clock })
			clock = start.Add(tc.elapsed)
			for i, b := range tc.bundles {
				ca.bundle = []byte(b)
				err := check.Check(httptest.NewRequest("GET", "/readyz", nil))
				if (err == nil) != tc.want[i] {
					t.Errorf("check %d with bundle %q: error %v, want ready %v", i, b, err, tc.want[i])
				}
			}
		})
	}
}
