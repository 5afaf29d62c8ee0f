// Package inprocess lets code running inside flotilla-apiserver (the
// embedded controllers, the member hub, search) read and write the
// server's own storage without HTTP or JSON.
//
// A Storage holds the REST storage of every resource the server serves
// (what its API groups install), its admission chain and the identity of
// its own requests. Clientset is the generated clientset's interface over
// it: each call goes to the resource's REST storage in the calling
// goroutine, through the same steps an HTTP request takes there (defaults,
// namespace checks, mutating admission, the registry strategy's
// validation, validating admission, the FederatedResourceQuota guard,
// optimistic concurrency), so a write refused over HTTP is refused in
// process with the same error; only the encoding, the transport, the
// authentication of the loopback token, audit and managed fields are left
// out. Patches (merge, JSON and strategic merge) are applied to the stored
// object as the HTTP handler applies them; server-side apply goes over
// HTTP.
//
// Objects are never shared with a caller that may change them: what a
// caller passes is copied before the storage prepares it, and what the
// storage's watch cache holds is copied before a caller gets it, except
// through Informers, whose objects feed informers and are read-only by the
// informers' contract (nothing in the process changes an object it did
// not copy; the race-detector test proves it for the writes the
// controllers make).
package inprocess
