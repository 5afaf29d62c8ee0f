// Package addons is flotillactl addons: karmadactl's addons (descheduler,
// metrics adapter, scheduler estimator, search) and what serves each here,
// where they are built into flotilla-apiserver: list reads whether their
// APIServices are Available; enable and disable explain how each is
// turned on or off.
package addons
