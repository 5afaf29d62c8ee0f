// Package validationtest holds what the validation tests of every API group
// share.
package validationtest

import (
	"strings"
	"testing"
)

// Expect fails t unless err mentions want, or is nil when want is "".
func Expect(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("want no error, got %v", err)
	case want != "" && err == nil:
		t.Errorf("want an error with %q, got none", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("want an error with %q, got %v", want, err)
	}
}
