// Package webhook is the resource interpreter that calls Karmada-style
// interpreter webhooks (docs/compatibility.md, The resource interpreter). It
// implements interpreter.Interpreter, plus GetComponents.
//
// It owns:
//   - matching a kind and operation to a webhook of a
//     ResourceInterpreterWebhookConfiguration (the first match wins, in
//     configuration name order and then webhook order);
//   - the wire protocol: a ResourceInterpreterContext of version v1alpha1
//     POSTed over HTTPS, with the webhook's timeout and caBundle;
//   - a cache of HTTP clients, so TLS setup is not redone per call;
//   - turning responses into results, including applying the JSON patches of
//     ReviseReplica, Retain and AggregateStatus, within bounds on the patch,
//     the work of applying it and the patched object (patch.go): a webhook
//     is trusted to interpret, not to exhaust the process calling it.
//
// It does not own watching the configurations (it reads a lister fed by an
// informer run elsewhere), validating them (apis/config/validation), nor the
// order in which interpreters are consulted (Lua customizations, then
// webhooks, then third-party and native built-ins). It never calls a webhook
// for Prune: the Interpreter contract has no Prune method, so HookEnabled
// reports false for it.
package webhook
