package lua

import (
	"encoding/json"
	"testing"
)

// encodeJSON writes what json.Marshal writes of fromLua's result.
func TestEncodeJSONMatchesMarshal(t *testing.T) {
	t.Parallel()
	L := newState()
	defer L.Close()
	if err := L.DoString(`v = {
		a = 1, b = 1.5, c = {"x", true, 3}, d = {}, e = {}, big = 1e21, neg = -2,
		s = "quote\" back\\ nl\n tab\t ctl\1 <&> \226\128\168 é \255",
		nested = {z = {y = {}}, [1] = "one-as-key"},
		list = {{name = "n", value = {}}},
	}`); err != nil {
		t.Fatal(err)
	}
	v := L.GetGlobal("v")
	ref := map[string]any{"d": map[string]any{}, "e": []any{}, "list": []any{map[string]any{"value": map[string]any{}}}}
	got, err := newBudget(Limits{}).encodeJSON(nil, v, ref, 0)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := newBudget(Limits{}).fromLua(v, ref)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(conv)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("encodeJSON\n got %s\nwant %s", got, want)
	}
	if !json.Valid(got) {
		t.Errorf("not valid JSON: %s", got)
	}
	if err := L.DoString(`bad = {x = 0/0}`); err != nil {
		t.Fatal(err)
	}
	if _, err := newBudget(Limits{}).encodeJSON(nil, L.GetGlobal("bad"), nil, 0); err == nil {
		t.Error("NaN encoded")
	}
}
