package server

import (
	"bytes"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// The host publishes the CA of its clients' certificates here, for
// delegated authentication (kube-apiserver's client-ca-file).
const (
	authenticationConfigMap = "extension-apiserver-authentication"
	clientCAKey             = "client-ca-file"
)

// clientCAGrace bounds how long clientCALoaded waits: a server whose
// authentication reads another cluster than host is ready after it.
const clientCAGrace = time.Minute

// clientCALoaded is the readyz check "client-ca": ready once the server
// trusts the host's client CA. Delegated authentication reads that CA
// through an informer that starts with the server, so for its first
// moments a caller with a client certificate (a kubeconfig of the host's
// admin, the test bed's clients) would be taken for system:anonymous and
// refused. Once loaded it stays ready (a new CA is added, not swapped).
func clientCALoaded(ca dynamiccertificates.CAContentProvider, host kubernetes.Interface, now func() time.Time) healthz.HealthChecker {
	var loaded atomic.Bool
	start := now()
	return healthz.NamedCheck("client-ca", func(r *http.Request) error {
		if loaded.Load() || ca == nil {
			return nil
		}
		cm, err := host.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(r.Context(), authenticationConfigMap, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			loaded.Store(true) // nothing to load
			return nil
		case err != nil:
			return err
		}
		want := bytes.TrimSpace([]byte(cm.Data[clientCAKey]))
		if len(want) == 0 || bytes.Contains(ca.CurrentCABundleContent(), want) {
			loaded.Store(true)
			return nil
		}
		if now().Sub(start) > clientCAGrace {
			klog.Warningf("The client CA of %s/%s is still not among the CAs this server trusts after %v: ready anyway (does --authentication-kubeconfig reach another cluster?)",
				metav1.NamespaceSystem, authenticationConfigMap, clientCAGrace)
			loaded.Store(true)
			return nil
		}
		return fmt.Errorf("the client CA of %s/%s is not loaded yet", metav1.NamespaceSystem, authenticationConfigMap)
	})
}
