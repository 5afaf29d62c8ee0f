package podautoscaler

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

const (
	running = corev1.PodRunning
	pending = corev1.PodPending
	failed  = corev1.PodFailed
)

// TestResourceUtilization ports the resource scenarios of upstream's
// replica_calculator_test.go (TestReplicaCalc*), 2 containers per pod.
func TestResourceUtilization(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		current    int32
		pods       podSet
		levels     [][]int64
		sampleName []string
		container  string
		target     int32
		tolerances *Tolerances

		wantReplicas    int32
		wantUtilization int32
		wantValue       int64
		wantErr         string
	}{
		{
			// 3 pods at 50% of request, target 30%: ceil(50/30*3) = 5.
			name: "scale up", current: 3,
			pods: podSet{n: 3, requests: []int64{1000, 1000, 1000}}, levels: levels(300, 500, 700), target: 30,
			wantReplicas: 5, wantUtilization: 50, wantValue: 2 * 500,
		},
		{
			name: "container scale up", current: 3,
			pods:   podSet{n: 3, requests: []int64{1000, 1000, 1000}},
			levels: [][]int64{{1000, 300}, {1000, 500}, {1000, 700}}, container: "container2", target: 30,
			wantReplicas: 5, wantUtilization: 50, wantValue: 500,
		},
		{
			// The unready pod's sample is dropped: ready ones are at 60%,
			// ratio 2; the unready pod counts 0: (0+500+700)/3000 = 40%,
			// ratio 4/3, ceil(4/3*3) = 4.
			name: "scale up with an unready pod scales less", current: 3,
			pods:   podSet{n: 3, readiness: conditions(F, T, T), requests: []int64{1000, 1000, 1000}},
			levels: levels(300, 500, 700), target: 30,
			wantReplicas: 4, wantUtilization: 60, wantValue: 2 * 600,
		},
		{
			name: "scale up with a hot container scales less", current: 3,
			pods:   podSet{n: 3, starts: []time.Time{hot, cool, cool}, requests: []int64{1000, 1000, 1000}},
			levels: [][]int64{{0, 300}, {0, 500}, {0, 700}}, container: "container2", target: 30,
			wantReplicas: 4, wantUtilization: 60, wantValue: 600,
		},
		{
			name: "scale up with a hot pod scales less", current: 3,
			pods:   podSet{n: 3, starts: []time.Time{hot, cool, cool}, requests: []int64{1000, 1000, 1000}},
			levels: levels(300, 500, 700), target: 30,
			wantReplicas: 4, wantUtilization: 60, wantValue: 2 * 600,
		},
		{
			// Ready pod at 40%; with the unready ones at 0: 400/3000 = 13%,
			// a scale-down: direction flipped, keep 3.
			name: "scale up with unready pods does not scale", current: 3,
			pods:   podSet{n: 3, readiness: conditions(T, F, F), requests: []int64{1000, 1000, 1000}},
			levels: levels(400, 500, 700), target: 30,
			wantReplicas: 3, wantUtilization: 40, wantValue: 2 * 400,
		},
		{
			name: "scale up with hot unready pods does not scale", current: 3,
			pods:   podSet{n: 3, readiness: conditions(T, F, F), starts: []time.Time{cool, hot, hot}, requests: []int64{1000, 1000, 1000}},
			levels: levels(400, 500, 700), target: 30,
			wantReplicas: 3, wantUtilization: 40, wantValue: 2 * 400,
		},
		{
			name: "scale up ignores failed pods", current: 2,
			pods: podSet{n: 2, readiness: conditions(T, T, F, F), phases: phases(running, running, failed, failed),
				requests: []int64{1000, 1000, 1000, 1000}},
			levels: levels(500, 700), target: 30,
			wantReplicas: 4, wantUtilization: 60, wantValue: 2 * 600,
		},
		{
			name: "container scale up ignores failed pods with missing container metrics", current: 2,
			pods: podSet{n: 2, readiness: conditions(T, T, F, F), phases: phases(running, running, failed, failed),
				requests: []int64{1000, 1000, 1000, 1000}},
			levels: [][]int64{{1000, 500}, {9000, 700}, {1000}, {9000}}, container: "container2", target: 30,
			wantReplicas: 4, wantUtilization: 60, wantValue: 600,
		},
		{
			name: "container scale up ignores failed pods", current: 2,
			pods: podSet{n: 2, readiness: conditions(T, T, F, F), phases: phases(running, running, failed, failed),
				requests: []int64{1000, 1000, 1000, 1000}},
			levels: [][]int64{{1000, 500}, {9000, 700}}, container: "container2", target: 30,
			wantReplicas: 4, wantUtilization: 60, wantValue: 600,
		},
		{
			name: "scale up ignores pods being deleted", current: 2,
			pods: podSet{n: 2, readiness: conditions(T, T, F, F), phases: repeat(running, 4), deleting: []bool{false, false, true, true},
				requests: []int64{1000, 1000, 1000, 1000}},
			levels: levels(500, 700), target: 30,
			wantReplicas: 4, wantUtilization: 60, wantValue: 2 * 600,
		},
		{
			name: "container scale up ignores pods being deleted", current: 2,
			pods: podSet{n: 2, readiness: conditions(T, T, F, F), phases: repeat(running, 4), deleting: []bool{false, false, true, true},
				requests: []int64{1000, 1000, 1000, 1000}},
			levels: levels(500, 700), container: "container1", target: 30,
			wantReplicas: 4, wantUtilization: 60, wantValue: 600,
		},
		{
			// (100+300+500+250+250)/5 = 280 per container, 28% of request,
			// ratio 0.56: ceil(0.56*5) = 3.
			name: "scale down", current: 5,
			pods:   podSet{n: 5, requests: repeat[int64](1000, 5)},
			levels: levels(100, 300, 500, 250, 250), target: 50,
			wantReplicas: 3, wantUtilization: 28, wantValue: 2 * 280,
		},
		{
			name: "container scale down", current: 5,
			pods:   podSet{n: 5, requests: repeat[int64](1000, 5)},
			levels: [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}}, container: "container2", target: 50,
			wantReplicas: 3, wantUtilization: 28, wantValue: 280,
		},
		{
			// Only the 3 ready pods count: 30%, ratio 0.6, ceil(1.8) = 2.
			name: "scale down excludes unready pods", current: 5,
			pods:   podSet{n: 5, readiness: conditions(T, T, T, F, F), requests: repeat[int64](1000, 5)},
			levels: levels(100, 300, 500, 250, 250), target: 50,
			wantReplicas: 2, wantUtilization: 30, wantValue: 2 * 300,
		},
		{
			name: "container scale down excludes unready pods", current: 5,
			pods:   podSet{n: 5, readiness: conditions(T, T, T, F, F), requests: repeat[int64](1000, 5)},
			levels: [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}}, container: "container2", target: 50,
			wantReplicas: 2, wantUtilization: 30, wantValue: 300,
		},
		{
			name: "scale down excludes pending pods", current: 5,
			pods: podSet{n: 5, readiness: conditions(T, F, F, F, F), phases: phases(running, pending, pending, pending, pending),
				requests: repeat[int64](1000, 5)},
			levels: levels(100), target: 50,
			wantReplicas: 1, wantUtilization: 10, wantValue: 2 * 100,
		},
		{
			name: "container scale down excludes pending pods", current: 5,
			pods: podSet{n: 5, readiness: conditions(T, F, F, F, F), phases: phases(running, pending, pending, pending, pending),
				requests: repeat[int64](1000, 5)},
			levels: [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}}, container: "container2", target: 50,
			wantReplicas: 1, wantUtilization: 10, wantValue: 100,
		},
		{
			name: "scale down ignores hot pods", current: 5,
			pods:   podSet{n: 5, starts: []time.Time{cool, cool, cool, hot, hot}, requests: repeat[int64](1000, 5)},
			levels: levels(100, 300, 500, 250, 250), target: 50,
			wantReplicas: 2, wantUtilization: 30, wantValue: 2 * 300,
		},
		{
			name: "container scale down ignores hot pods", current: 5,
			pods:   podSet{n: 5, starts: []time.Time{cool, cool, cool, hot, hot}, requests: repeat[int64](1000, 5)},
			levels: [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 1000}, {1000, 1000}}, container: "container2", target: 50,
			wantReplicas: 2, wantUtilization: 30, wantValue: 300,
		},
		{
			name: "scale down ignores failed pods", current: 5,
			pods: podSet{n: 5, readiness: conditions(T, T, T, T, T, F, F), phases: append(repeat(running, 5), failed, failed),
				requests: repeat[int64](1000, 7)},
			levels: levels(100, 300, 500, 250, 250), target: 50,
			wantReplicas: 3, wantUtilization: 28, wantValue: 2 * 280,
		},
		{
			name: "container scale down ignores failed pods", current: 5,
			pods: podSet{n: 5, readiness: conditions(T, T, T, T, T, F, F), phases: append(repeat(running, 5), failed, failed),
				requests: repeat[int64](1000, 7)},
			levels: [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}}, container: "container2", target: 50,
			wantReplicas: 3, wantUtilization: 28, wantValue: 280,
		},
		{
			name: "scale down ignores pods being deleted", current: 5,
			pods: podSet{n: 5, readiness: conditions(T, T, T, T, T, F, F), phases: repeat(running, 7),
				deleting: []bool{false, false, false, false, false, true, true}, requests: repeat[int64](1000, 7)},
			levels: levels(100, 300, 500, 250, 250), target: 50,
			wantReplicas: 3, wantUtilization: 28, wantValue: 2 * 280,
		},
		{
			// kubernetes#83561: running pods being deleted are ignored too.
			name: "container scale down ignores running pods being deleted", current: 5,
			pods: podSet{n: 5, readiness: conditions(T, T, T, T, T, F, F), phases: repeat(running, 7),
				deleting: []bool{false, false, false, false, false, true, true}, requests: repeat[int64](1000, 7)},
			levels: [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}}, container: "container2", target: 50,
			wantReplicas: 3, wantUtilization: 28, wantValue: 280,
		},
		{
			// 6120 of 6000 requested: 102%, within 10%.
			name: "within tolerance", current: 3,
			pods:   podSet{n: 3, requests: []int64{900, 1000, 1100}},
			levels: levels(1010, 1030, 1020), target: 100,
			wantReplicas: 3, wantUtilization: 102, wantValue: 2 * 1020,
		},
		{
			name: "outside a 0% tolerance", current: 3, tolerances: &Tolerances{0, 0},
			pods:   podSet{n: 3, requests: []int64{900, 1000, 1100}},
			levels: levels(909, 1010, 1111), target: 100,
			wantReplicas: 4, wantUtilization: 101, wantValue: 2 * 1010,
		},
		{
			name: "within a 200% scale-up tolerance", current: 3, tolerances: &Tolerances{ScaleDown: testingTolerance, ScaleUp: 2},
			pods:   podSet{n: 3, requests: []int64{900, 1000, 1100}},
			levels: levels(1890, 1910, 1900), target: 100,
			wantReplicas: 3, wantUtilization: 190, wantValue: 2 * 1900,
		},
		{
			name: "outside an 8% scale-up tolerance", current: 3, tolerances: &Tolerances{ScaleDown: 2, ScaleUp: .08},
			pods:   podSet{n: 3, requests: []int64{900, 1000, 1100}},
			levels: levels(1100, 1080, 1090), target: 100,
			wantReplicas: 4, wantUtilization: 109, wantValue: 2 * 1090,
		},
		{
			name: "within a 36% scale-down tolerance", current: 3, tolerances: &Tolerances{ScaleDown: .36, ScaleUp: testingTolerance},
			pods:   podSet{n: 3, requests: []int64{900, 1000, 1100}},
			levels: levels(660, 640, 650), target: 100,
			wantReplicas: 3, wantUtilization: 65, wantValue: 2 * 650,
		},
		{
			name: "outside a 34% scale-down tolerance", current: 3, tolerances: &Tolerances{ScaleDown: .34, ScaleUp: testingTolerance},
			pods:   podSet{n: 3, requests: []int64{900, 1000, 1100}},
			levels: levels(660, 640, 650), target: 100,
			wantReplicas: 2, wantUtilization: 65, wantValue: 2 * 650,
		},
		{
			// Samples of pods 4 and 5, which are not listed, have no
			// request and do not count: 47000/8000 = 587%, ceil(5.87*4).
			name: "superfluous metrics", current: 4,
			pods:   podSet{n: 4, requests: repeat[int64](1000, 4)},
			levels: levels(4000, 9500, 3000, 7000, 3200, 2000), target: 100,
			wantReplicas: 24, wantUtilization: 587, wantValue: 2 * 5875,
		},
		{
			// 990/4000 = 24%; with the missing pods at 100%: 4990/8000 =
			// 62%, ceil(0.62*4) = 3.
			name: "missing metrics", current: 4,
			pods:   podSet{n: 4, requests: repeat[int64](1000, 4)},
			levels: levels(400, 95), target: 100,
			wantReplicas: 3, wantUtilization: 24, wantValue: 495,
		},
		{
			name: "missing metrics exactly on target", current: 2,
			pods:   podSet{n: 2, requests: []int64{1000, 1000}},
			levels: levels(1000), target: 100,
			wantReplicas: 2, wantUtilization: 100, wantValue: 2 * 1000,
		},
		{
			// 190%; with the missing pod at 0: 95%, within tolerance.
			name: "missing metrics above target within tolerance once rebalanced", current: 2,
			pods:   podSet{n: 2, requests: []int64{1000, 1000}},
			levels: levels(1900), target: 100,
			wantReplicas: 2, wantUtilization: 190, wantValue: 2 * 1900,
		},
		{
			// 60%; with the missing pod at 100%: 80%, ceil(0.8*2) = 2.
			name: "missing metrics below target", current: 2,
			pods:   podSet{n: 2, requests: []int64{1000, 1000}},
			levels: levels(600), target: 100,
			wantReplicas: 2, wantUtilization: 60, wantValue: 2 * 600,
		},
		{
			// Ready pod 1 at 45% (ratio 0.9, a scale-down): the unready pod
			// is dropped, the missing pod 2 at 100%: 145/200 = 72%, ratio
			// 1.45: direction flipped, keep 3.
			name: "missing metrics with an unready pod does not change", current: 3,
			pods:   podSet{n: 3, readiness: conditions(F, T, T), requests: repeat[int64](1000, 3)},
			levels: levels(100, 450), target: 50,
			wantReplicas: 3, wantUtilization: 45, wantValue: 2 * 450,
		},
		{
			name: "missing metrics with a hot pod does not change", current: 3,
			pods:   podSet{n: 3, starts: []time.Time{hot, cool, cool}, requests: repeat[int64](1000, 3)},
			levels: levels(100, 450), target: 50,
			wantReplicas: 3, wantUtilization: 45, wantValue: 2 * 450,
		},
		{
			// Ready pod 1 at 200%: unready pod 0 and missing pod 2 at 0:
			// 4000/6000 = 66%, ratio 1.32, ceil(1.32*3) = 4.
			name: "missing metrics with an unready pod scales up", current: 3,
			pods:   podSet{n: 3, readiness: conditions(F, T, T), requests: repeat[int64](1000, 3)},
			levels: levels(100, 2000), target: 50,
			wantReplicas: 4, wantUtilization: 200, wantValue: 2 * 2000,
		},
		{
			name: "missing metrics with a hot unready pod scales up", current: 3,
			pods:   podSet{n: 3, readiness: conditions(F, T, T), starts: []time.Time{hot, cool, cool}, requests: repeat[int64](1000, 3)},
			levels: levels(100, 2000), target: 50,
			wantReplicas: 4, wantUtilization: 200, wantValue: 2 * 2000,
		},
		{
			// Ready pods at 10%; missing pod 3 at 100%: 2600/6000 = 43%,
			// ratio 0.86, ceil(0.86*3) = 3.
			name: "missing metrics with an unready pod scales down", current: 4,
			pods:   podSet{n: 4, readiness: conditions(F, T, T, T), requests: repeat[int64](1000, 4)},
			levels: levels(100, 100, 100), target: 50,
			wantReplicas: 3, wantUtilization: 10, wantValue: 2 * 100,
		},
		{
			// Ready pods 1, 2 at 400/6000 = 6%; missing pod 3 at 300% of
			// its 4000 request: 12400/10000 = 124%, ratio 0.41, ceil(1.24) = 2.
			name: "missing metrics on a scale down assume the target above 100%", current: 4,
			pods:   podSet{n: 4, readiness: conditions(F, T, T, T), requests: []int64{1000, 1000, 2000, 2000}},
			levels: levels(200, 100, 100), target: 300,
			wantReplicas: 2, wantUtilization: 6, wantValue: 2 * 100,
		},
		{
			// A surge pod without a sample during a rolling update: 10%;
			// with it at 100%: 40%, ratio 0.8, ceil(2.4) = 3 > 2: keep 2.
			name: "rolling update with max surge", current: 2,
			pods:   podSet{n: 2, phases: repeat(running, 3), requests: repeat[int64](1000, 3)},
			levels: levels(100, 100), target: 50,
			wantReplicas: 2, wantUtilization: 10, wantValue: 2 * 100,
		},
		{
			// Upstream's TestReplicaCalcComputedToleranceAlgImplementation:
			// 10 pods using 300m of ~600m requested (50%), target
			// int32((1/(2*0.9)+0.01)*100) = 56: ratio 0.893, just outside
			// tolerance, ceil(8.93) = 9.
			name: "computed tolerance: just outside", current: 10,
			pods:   podSet{n: 10, requests: []int64{400, 200, 310, 290, 302, 298, 301, 299, 300, 300}},
			levels: levels(repeat[int64](150, 10)...), target: 56,
			wantReplicas: 9, wantUtilization: 50, wantValue: 2 * 150,
		},
		{
			// Target int32((1/(2*0.9)+0.004)*100) = 55: ratio 0.909, inside.
			name: "computed tolerance: just inside", current: 10,
			pods:   podSet{n: 10, requests: []int64{400, 200, 310, 290, 302, 298, 301, 299, 300, 300}},
			levels: levels(repeat[int64](150, 10)...), target: 55,
			wantReplicas: 10, wantUtilization: 50, wantValue: 2 * 150,
		},
		{
			name: "samples of unknown pods only", current: 1,
			pods:   podSet{n: 1, requests: []int64{1000}},
			levels: levels(100), sampleName: []string{"an-older-pod-name"}, target: 100,
			wantErr: "no metrics returned matched known pods",
		},
		{
			name: "missing request", current: 1,
			pods:   podSet{n: 1},
			levels: levels(200), target: 100,
			wantErr: "missing request for cpu in container container1 of Pod test-pod-0",
		},
		{
			name: "no pods", current: 1,
			pods:   podSet{n: 0},
			levels: levels(200), target: 100,
			wantErr: "no pods returned by selector while calculating replica count",
		},
		{
			name: "only unready samples", current: 2,
			pods:   podSet{n: 2, readiness: conditions(F, F), requests: []int64{1000, 1000}},
			levels: levels(200, 200), target: 100,
			wantErr: "did not receive metrics for targeted pods (pods might be unready)",
		},
		{
			name: "container not in pod", current: 1,
			pods:   podSet{n: 1, requests: []int64{1000}},
			levels: [][]int64{{100, 100, 100}}, container: "container3", target: 100,
			wantErr: "container container3 not found in Pod test-pod-0",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.pods.resource = corev1.ResourceCPU
			calc := testingCalculator(tc.tolerances)
			samples := containerSamples(tc.levels, tc.container, tc.sampleName)
			before := len(samples)
			got, err := calc.ResourceUtilization(tc.current, tc.target, corev1.ResourceCPU, tc.container, tc.pods.build(), samples)
			if len(samples) != before {
				t.Errorf("the caller's samples were modified")
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want := UtilizationProposal{Replicas: tc.wantReplicas, Utilization: tc.wantUtilization, AverageValue: tc.wantValue}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

// TestAveragePerPod ports upstream's Pods-metric scenarios and covers the
// raw resource AverageValue target, for which CPU readiness rules apply.
func TestAveragePerPod(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		current    int32
		pods       podSet
		samples    PodMetrics
		resource   corev1.ResourceName // "" for a Pods metric
		target     int64
		tolerances *Tolerances

		wantReplicas int32
		wantValue    int64
		wantErr      string
	}{
		{
			name: "scale up", current: 3, pods: podSet{n: 3},
			samples: podSamples(20000, 10000, 30000), target: 15000,
			wantReplicas: 4, wantValue: 20000,
		},
		{
			// Readiness is only checked for CPU: the unready hot pod counts.
			name: "unready hot pod counts for a custom metric", current: 3,
			pods:    podSet{n: 3, readiness: conditions(T, T, F), starts: []time.Time{cool, cool, hot}},
			samples: podSamples(50000, 10000, 30000), target: 15000,
			wantReplicas: 6, wantValue: 30000,
		},
		{
			name: "unready hot pods count for a custom metric", current: 3,
			pods:    podSet{n: 3, readiness: conditions(F, T, F), starts: []time.Time{hot, cool, hot}},
			samples: podSamples(50000, 15000, 30000), target: 15000,
			wantReplicas: 7, wantValue: 31666,
		},
		{
			name: "scale up a single pod", current: 1, pods: podSet{n: 1},
			samples: podSamples(8600), target: 4400,
			wantReplicas: 2, wantValue: 8600,
		},
		{
			name: "scale down", current: 5, pods: podSet{n: 5},
			samples: podSamples(repeat[int64](12000, 5)...), target: 20000,
			wantReplicas: 3, wantValue: 12000,
		},
		{
			name: "within tolerance", current: 3, pods: podSet{n: 3},
			samples: podSamples(20000, 21000, 21000), target: 20000,
			wantReplicas: 3, wantValue: 20666,
		},
		{
			name: "outside a 1% scale-up tolerance", current: 3, pods: podSet{n: 3},
			tolerances: &Tolerances{ScaleDown: testingTolerance, ScaleUp: .01},
			samples:    podSamples(20000, 21000, 21000), target: 20000,
			wantReplicas: 4, wantValue: 20666,
		},
		{
			// Missing pods 3 and 4 at the target on a scale-down: ratio 1.
			name: "missing metrics on target", current: 5, pods: podSet{n: 5},
			samples: podSamples(20000, 19000, 21000), target: 20000,
			wantReplicas: 5, wantValue: 20000,
		},
		{
			// 10000/17000 = 0.59; the surge pod at 17000: 37000/3/17000 =
			// 0.73, ceil(2.18) = 3 > 2: keep 2.
			name: "rolling update with max surge", current: 2, pods: podSet{n: 2, phases: repeat(running, 3)},
			samples: podSamples(10000, 10000), target: 17000,
			wantReplicas: 2, wantValue: 10000,
		},
		{
			// A CPU AverageValue target: the unready pod's sample is dropped
			// (average 600), then counts 0 on the scale-up: 1200/3 = 400,
			// ratio 4/3, ceil(4) = 4.
			name: "cpu average value drops unready pods", current: 3, resource: corev1.ResourceCPU,
			pods:    podSet{n: 3, readiness: conditions(F, T, T)},
			samples: podSamples(600, 500, 700), target: 300,
			wantReplicas: 4, wantValue: 600,
		},
		{
			name: "memory average value ignores readiness", current: 3, resource: corev1.ResourceMemory,
			pods:    podSet{n: 3, readiness: conditions(F, T, T)},
			samples: podSamples(600, 500, 700), target: 300,
			wantReplicas: 6, wantValue: 600,
		},
		{
			name: "no pods", current: 3, pods: podSet{},
			samples: podSamples(1), target: 1,
			wantErr: "no pods returned by selector while calculating replica count",
		},
		{
			name: "only failed pods", current: 2, pods: podSet{phases: phases(failed, failed)},
			samples: podSamples(1, 1), target: 1,
			wantErr: "did not receive metrics for targeted pods (pods might be unready)",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calc := testingCalculator(tc.tolerances)
			var got ValueProposal
			var err error
			if tc.resource == "" {
				got, err = calc.PodsAverageValue(tc.current, tc.target, tc.pods.build(), tc.samples)
			} else {
				got, err = calc.ResourceAverageValue(tc.current, tc.target, tc.resource, tc.pods.build(), tc.samples)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want := ValueProposal{Replicas: tc.wantReplicas, Value: tc.wantValue}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

// TestSampleTimestamp checks that the oldest sample time is reported.
func TestSampleTimestamp(t *testing.T) {
	t.Parallel()
	samples := PodMetrics{
		podKey(0): {Timestamp: testNow.Add(-time.Minute), Value: 100},
		podKey(1): {Timestamp: testNow.Add(-2 * time.Minute), Value: 100},
	}
	calc := testingCalculator(nil)
	got, err := calc.PodsAverageValue(2, 100, podSet{n: 2}.build(), samples)
	if err != nil {
		t.Fatal(err)
	}
	if want := testNow.Add(-2 * time.Minute); !got.Timestamp.Equal(want) {
		t.Errorf("timestamp = %v, want %v", got.Timestamp, want)
	}
}

// TestMultiClusterPods checks that pods of different clusters with the same
// name are told apart.
func TestMultiClusterPods(t *testing.T) {
	t.Parallel()
	pods := make([]Pod, 0, 4)
	samples := PodMetrics{}
	for i, cluster := range []string{"member1", "member2"} {
		for j, name := range []string{"web-0", "web-1"} {
			p := Pod{Cluster: cluster, Namespace: "default", Name: name, Phase: running, Ready: T, StartTime: cool,
				Containers: []Container{{Name: "app", Requests: map[corev1.ResourceName]int64{corev1.ResourceCPU: 1000}}}}
			pods = append(pods, p)
			// member1 pods use 900m, member2 pods 300m: 60% overall.
			samples[p.Key()] = PodMetric{Window: time.Minute, Value: int64(900 - 600*i + 0*j)}
		}
	}
	// member2/web-1 is still pending: its sample is dropped, 2100/3000 = 70%.
	pods[3].Phase = pending
	calc := testingCalculator(nil)
	got, err := calc.ResourceUtilization(4, 50, corev1.ResourceCPU, "", pods, samples)
	if err != nil {
		t.Fatal(err)
	}
	// Ratio 1.4 with an unready pod: it counts 0, 2100/4000 = 52%, ratio
	// 1.04, within tolerance: keep 4.
	if want := (UtilizationProposal{Replicas: 4, Utilization: 70, AverageValue: 700}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
