package overrides_test

import (
	"github.com/flotilla-io/flotilla/controllers/binding"
	"github.com/flotilla-io/flotilla/controllers/internal/overrides"
)

// Apply is what the binding controller calls to override a Work's manifest.
var _ binding.OverrideFunc = overrides.Apply
