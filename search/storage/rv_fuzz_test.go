package storage

import (
	"encoding/base64"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// The encoders are fuzzed with valid UTF-8 only: JSON strings cannot carry
// other bytes, and cluster names and object keys are Kubernetes names.

// FuzzMultiRV checks that ParseMultiRV never panics, that what it accepts
// encodes back to the same map, and that what String encodes decodes to
// the map it came from.
func FuzzMultiRV(f *testing.F) {
	for _, s := range []string{
		"", "0", "!!", "e30", "bnVsbA",
		MultiRV{"member1": "10", "member2": "20"}.String(),
		base64.RawURLEncoding.EncodeToString([]byte(`{"m":"x"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"m":"1","m":"2"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"a\"b":"1"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`[1]`)),
	} {
		f.Add(s, "member1", uint64(10), "member2", uint64(20))
	}
	f.Add("", `quo"te\`, uint64(0), "\u2028<&>", uint64(1<<63))
	f.Add("", "", uint64(1), "\x01", uint64(2))
	f.Fuzz(func(t *testing.T, s, c1 string, rv1 uint64, c2 string, rv2 uint64) {
		if m, err := ParseMultiRV(s); err == nil {
			back, err := ParseMultiRV(m.String())
			if err != nil || !cmp.Equal(back, m) || (back == nil) != (m == nil) {
				t.Fatalf("ParseMultiRV(%q) = %v, which encodes to %q, decoded as %v (error %v)", s, m, m.String(), back, err)
			}
		}

		if !utf8.ValidString(c1) || !utf8.ValidString(c2) {
			return
		}
		m := MultiRV{c1: strconv.FormatUint(rv1, 10), c2: strconv.FormatUint(rv2, 10)}
		back, err := ParseMultiRV(m.String())
		if err != nil || !cmp.Equal(back, m) || back == nil {
			t.Fatalf("%v encodes to %q, decoded as %v (error %v)", m, m.String(), back, err)
		}
		if back, err := ParseMultiRV(MultiRV(nil).String()); err != nil || back != nil {
			t.Fatalf("the nil MultiRV does not round-trip: %v %v", back, err)
		}
	})
}

// FuzzContinueToken checks that parseContinue never panics, that what it
// accepts encodes back to the same token, and that what String encodes
// decodes to the token it came from.
func FuzzContinueToken(f *testing.F) {
	rv := MultiRV{"member1": "10", "member2": "20"}.String()
	for _, s := range []string{
		"", "!!", "e30", "bnVsbA",
		continueToken{RV: rv, Cluster: "member2", Continue: "default/web-1"}.String(),
		continueToken{RV: "0", Cluster: "member1"}.String(),
		base64.RawURLEncoding.EncodeToString([]byte(`{"rv":"!!","cluster":"m"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"cluster":""}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"cluster":"m","cluster":"n","continue":1}`)),
	} {
		f.Add(s, "member1", "default/web-1", uint64(10))
	}
	f.Add("", "", "", uint64(0))
	f.Add("", `quo"te\`, "\u2028<&>/\x00", uint64(1<<63))
	f.Fuzz(func(t *testing.T, s, cluster, cont string, n uint64) {
		if tok, err := parseContinue(s); err == nil {
			if tok.Cluster == "" {
				t.Fatalf("parseContinue(%q) accepted a token without a cluster", s)
			}
			if _, err := ParseMultiRV(tok.RV); err != nil {
				t.Fatalf("parseContinue(%q) accepted resourceVersion %q: %v", s, tok.RV, err)
			}
			back, err := parseContinue(tok.String())
			if err != nil || back != tok {
				t.Fatalf("parseContinue(%q) = %+v, which encodes to %q, decoded as %+v (error %v)", s, tok, tok.String(), back, err)
			}
		} else if tok != (continueToken{}) {
			t.Fatalf("parseContinue(%q) failed (%v) but returned %+v", s, err, tok)
		}

		if !utf8.ValidString(cluster) || !utf8.ValidString(cont) {
			return
		}
		tok := continueToken{RV: MultiRV{cluster: strconv.FormatUint(n, 10)}.String(), Cluster: cluster, Continue: cont}
		if cluster == "" {
			if tok.String() != "" {
				t.Fatalf("a token without a cluster encodes to %q", tok.String())
			}
			return
		}
		back, err := parseContinue(tok.String())
		if err != nil || back != tok {
			t.Fatalf("%+v encodes to %q, decoded as %+v (error %v)", tok, tok.String(), back, err)
		}
	})
}
