// Package rolloutplan decides staged rollouts: the revision of a template
// (its content and hash), which clusters of a placement each stage of a
// RolloutStrategy holds and in what order, and each step of a RolloutRun:
// which clusters to update now, when a stage succeeds, soaks, waits at a
// gate or fails, and the events that tell people. It is a pure package: the
// rollout controller gathers the state from its caches, calls Step and
// writes what it returns.
package rolloutplan
