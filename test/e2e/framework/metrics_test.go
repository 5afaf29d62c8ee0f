package framework

import "testing"

func TestParseMetrics(t *testing.T) {
	page := `# HELP req Requests.
# TYPE req counter
req{verb="GET",resource="pods"} 3
req{verb="POST",resource="pods"} 2
# TYPE src gauge
src{cluster="m1",source="shared"} 1
# TYPE dur histogram
dur_bucket{cluster="m1",le="0.1"} 1
dur_bucket{cluster="m1",le="+Inf"} 2
dur_sum{cluster="m1"} 0.25
dur_count{cluster="m1"} 2
`
	ss, err := ParseMetrics([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		keep func(map[string]string) bool
		want float64
	}{
		{"req", nil, 5},
		{"req", func(l map[string]string) bool { return l["verb"] == "POST" }, 2},
		{"src", func(l map[string]string) bool { return l["source"] == "shared" }, 1},
		{"dur_sum", func(l map[string]string) bool { return l["cluster"] == "m1" }, 0.25},
		{"dur_count", nil, 2},
		{"dur_bucket", nil, 0},
	} {
		if got := ss.Sum(c.name, c.keep); got != c.want {
			t.Errorf("Sum(%s) = %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := ParseMetrics([]byte("not a metric line {")); err == nil {
		t.Error("a malformed page parsed")
	}
}
