package table

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	jsoniter "github.com/json-iterator/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	kjson "sigs.k8s.io/json"
)

// benchPods is how many pods a LIST of BenchmarkConvertPods prints.
const benchPods = 10000

// benchPodJSON returns n kwok-like pods in 100 namespaces on 50 nodes, a
// tenth of them with a restart and every third with a sidecar.
func benchPodJSON(tb testing.TB, n int) ([][]byte, int64) {
	tb.Helper()
	now := time.Now()
	objs := make([][]byte, n)
	var total int64
	for i := range objs {
		o := podOptions{containers: 1 + min(1, i%3), ready: 1}
		if i%10 == 0 {
			o.restarts, o.restartedAgo = 1, 5*time.Minute
		}
		pod := kwokPod(now, fmt.Sprintf("ns-%03d", i%100), fmt.Sprintf("web-7d9c8b5f6d-%05d", i), o)
		pod.Spec.NodeName = fmt.Sprintf("member1-kwok-node-%02d", i%50)
		objs[i] = mustJSON(tb, pod)
		total += int64(len(objs[i]))
	}
	return objs, total
}

// cpuTime returns the user and system CPU time the process has used so far.
func cpuTime(tb testing.TB) time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start, which other
// work on the machine disturbs less than the wall time.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkConvertPods prints a 10,000-pod LIST as kubectl get pods -A -o wide
// asks for it, with each row's metadata.
func BenchmarkConvertPods(b *testing.B) {
	c := newConvertor(b)
	objs, total := benchPodJSON(b, benchPods)
	b.Logf("%d pods, %d bytes of JSON, %d bytes per pod", len(objs), total, total/int64(len(objs)))
	b.SetBytes(total)
	b.ReportAllocs()
	start := cpuTime(b)
	var took []time.Duration
	for b.Loop() {
		began := time.Now()
		table, err := c.Convert(context.Background(), podGVK, objs, &metav1.TableOptions{}, metav1.ListMeta{ResourceVersion: "1"})
		took = append(took, time.Since(began))
		if err != nil {
			b.Fatal(err)
		}
		if len(table.Rows) != len(objs) {
			b.Fatalf("got %d rows", len(table.Rows))
		}
	}
	reportCPU(b, start)
	slices.Sort(took)
	b.ReportMetric(float64(took[(len(took)*99)/100])/1e6, "p99-ms")
}

// BenchmarkDecoders prints the same LIST with each candidate decoder of the
// typed objects: json-iterator as Convert uses it, json-iterator alone,
// sigs.k8s.io/json (what kube-apiserver's JSON serializer calls),
// encoding/json, and the scheme's JSON serializer itself.
func BenchmarkDecoders(b *testing.B) {
	c := newConvertor(b)
	objs, total := benchPodJSON(b, benchPods)
	serializer := serializerjson.NewSerializerWithOptions(serializerjson.DefaultMetaFactory, legacyscheme.Scheme, legacyscheme.Scheme, serializerjson.SerializerOptions{})
	decoders := []struct {
		name string
		fn   func([]byte, any) error
	}{
		{"json-iterator with time decoder and fallback", decodeObject},
		{"json-iterator alone", jsoniter.Config{EscapeHTML: true, SortMapKeys: true, ValidateJsonRawMessage: true, CaseSensitive: true}.Froze().Unmarshal},
		{"sigs.k8s.io/json", kjson.UnmarshalCaseSensitivePreserveInts},
		{"encoding/json", json.Unmarshal},
		{"scheme codec", func(data []byte, v any) error {
			obj, ok := v.(runtime.Object)
			if !ok {
				return json.Unmarshal(data, v)
			}
			_, _, err := serializer.Decode(data, nil, obj)
			return err
		}},
	}
	saved := unmarshal
	b.Cleanup(func() { unmarshal = saved })
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			unmarshal = d.fn
			b.SetBytes(total)
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				if _, err := c.Convert(context.Background(), podGVK, objs, nil, metav1.ListMeta{}); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}
