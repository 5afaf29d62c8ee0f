package app

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// waitValue is karmadactl's --wait, a duration (--wait=2m, --wait 2m),
// which also takes flotillactl's earlier --wait=true (the default
// duration) and --wait=false (no wait). It sets enabled and timeout.
type waitValue struct {
	enabled *bool
	timeout *time.Duration
}

var _ pflag.Value = waitValue{}

func (w waitValue) String() string {
	if w.enabled == nil || w.timeout == nil || !*w.enabled {
		return "0s"
	}
	return w.timeout.String()
}

func (w waitValue) Set(s string) error {
	if b, err := strconv.ParseBool(s); err == nil {
		*w.enabled = b
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is neither a duration (60s, 2m) nor true/false", s)
	}
	*w.enabled, *w.timeout = d > 0, d
	return nil
}

func (w waitValue) Type() string { return "duration" }

// addWaitFlags adds --wait (a duration; true/false accepted) and, hidden,
// the --timeout it replaces, both setting enabled and timeout.
func addWaitFlags(fs *pflag.FlagSet, enabled *bool, timeout *time.Duration, what string) {
	// A value is required, as karmadactl's: "--wait 2m" must not read as
	// --wait with an argument 2m.
	fs.Var(waitValue{enabled: enabled, timeout: timeout}, "wait",
		fmt.Sprintf("How long to wait %s (a duration, as karmadactl's --wait); 0 or false: do not wait.", what))
	fs.DurationVar(timeout, "timeout", *timeout, "Deprecated: use --wait=<duration>.")
	_ = fs.MarkHidden("timeout")
}

// alias adds name as another name of the flag target already has, hidden
// or not: karmadactl's names beside flotillactl's earlier ones.
func alias(fs *pflag.FlagSet, target, name, shorthand string, hidden bool) {
	f := fs.Lookup(target)
	if f == nil {
		panic("no flag " + target)
	}
	a := fs.VarPF(f.Value, name, shorthand, f.Usage)
	a.DefValue, a.NoOptDefVal = f.DefValue, f.NoOptDefVal
	if hidden {
		_ = fs.MarkHidden(name)
	} else {
		a.Usage = fmt.Sprintf("%s (also --%s)", f.Usage, target)
		_ = fs.MarkHidden(target)
	}
}

// ignoredString adds a karmadactl flag that means nothing here: accepted, so
// a runbook runs unchanged, with a note saying why on stderr when set.
func ignoredString(fs *pflag.FlagSet, name, def, why string) *string {
	return fs.String(name, def, ignoredPrefix+why)
}

func ignoredBool(fs *pflag.FlagSet, name string, def bool, why string) *bool {
	return fs.Bool(name, def, ignoredPrefix+why)
}

// noteIgnored writes a note for each ignored flag the user set.
func noteIgnored(fs *pflag.FlagSet, warn func(format string, args ...any)) {
	fs.Visit(func(f *pflag.Flag) {
		if why, ok := strings.CutPrefix(f.Usage, ignoredPrefix); ok && why != "" {
			warn("note: --%s is ignored: %s\n", f.Name, why)
		}
	})
}

// ignoredPrefix starts the usage of a flag noteIgnored reports.
const ignoredPrefix = "Accepted for karmadactl compatibility and ignored: "
