package server_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// benchManifest is a Deployment as the propagation benchmark's Works carry
// it (about 1.5 KB of JSON).
const benchManifest = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"bench","labels":{"app":"d","propagationpolicy.karmada.io/permanent-id":"0b5a3f3e-6c1e-4d3b-9a57-3f1a9d1b2c44"},"annotations":{"propagationpolicy.karmada.io/name":"p","propagationpolicy.karmada.io/namespace":"bench"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"10m","memory":"16Mi"}},"ports":[{"containerPort":80,"protocol":"TCP"}]}]}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}}`

// BenchmarkInProcessWorkStatus: what a Work's status write costs in
// process (the execution controller's merge patch of the status
// subresource), against the embedded etcd reached in process (as
// flotilla-apiserver does) and over gRPC (as with --etcd-servers).
//
//	go test -run '^$' -bench InProcessWorkStatus -cpuprofile /tmp/work.pprof ./server/
func BenchmarkInProcessWorkStatus(b *testing.B) {
	b.Run("etcd=in-process", func(b *testing.B) { benchWorkStatus(b, true) })
	b.Run("etcd=grpc", func(b *testing.B) { benchWorkStatus(b, false) })
}

func benchWorkStatus(b *testing.B, local bool) {
	_, _, inProcess := storageServerOver(b, local)
	ctx := b.Context()
	works := inProcess.WorkV1alpha1().Works("bench")
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "bench"}}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(benchManifest)}}}
	if _, err := works.Create(ctx, w, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		status := fmt.Sprintf(`{"status":{"conditions":[{"type":"Applied","status":"True","reason":"AppliedSuccessful","message":"%d","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, i)
		if _, err := works.Patch(ctx, "w", types.MergePatchType, []byte(status), metav1.PatchOptions{}, "status"); err != nil {
			b.Fatal(err)
		}
	}
}
