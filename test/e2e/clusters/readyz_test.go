package clusters

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestReadyzWaitsForTheClientCA: flotilla-apiserver's /readyz
// has the check "client-ca", which passes only once the server trusts the
// host's client CA, so no replica behind a Service answers a caller with a
// client certificate as system:anonymous in its first moments.
func TestReadyzWaitsForTheClientCA(t *testing.T) {
	cs, err := kubernetes.NewForConfig(framework.FlotillaConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/readyz").Param("verbose", "true").DoRaw(ctx)
		if err != nil {
			return err.Error()
		}
		if !strings.Contains(string(raw), "[+]client-ca ok") {
			return "no passed check client-ca in /readyz?verbose:\n" + string(raw)
		}
		return ""
	})
}
