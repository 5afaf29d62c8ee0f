package binding_test

import (
	"github.com/flotilla-io/flotilla/controllers/binding"
	"github.com/flotilla-io/flotilla/overrides"
)

// overrides.Apply is what the controllers manager gives the binding
// controller to override a Work's manifest.
var _ binding.OverrideFunc = overrides.Apply
