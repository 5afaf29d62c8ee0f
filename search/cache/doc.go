// Package cache keeps, for every ResourceRegistry, the objects of the kinds
// it selects in the Ready clusters it targets: one Store per (cluster,
// resource), filled by a paged list and kept in step by a watch with the
// control plane's member credentials (push clusters), started and stopped
// as registries and clusters change.
//
// What it owns: the stores (objects compressed, the last two minutes of changes kept for
// watches resuming from a resourceVersion), the member list/watch loops,
// the registries' Ready condition, and handing memory back to the system
// after bulk loads.
//
// What it does not own: how reads are answered (search/storage), who may
// read what (search/storage.Access), and the full-text index, which it
// only tells of every change through Indexer.
package cache
