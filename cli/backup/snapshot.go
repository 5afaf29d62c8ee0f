package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// dialTimeout bounds the connection to the etcd member a snapshot is taken from.
const dialTimeout = 10 * time.Second

// Status describes a verified snapshot file.
type Status struct {
	// Path is the snapshot file.
	Path string
	// Revision is the etcd revision the snapshot was taken at.
	Revision int64
	// Keys is how many keys the snapshot holds.
	Keys int
	// Size is the file's size in bytes.
	Size int64
	// SHA256 is the integrity digest etcd appends to a snapshot, hex-encoded;
	// restore checks the data against it.
	SHA256 string
	// EtcdVersion is the storage version of the etcd that wrote it.
	EtcdVersion string
}

// Save streams a snapshot from the one etcd member cfg names (as etcdctl
// snapshot save does) into path, then verifies the file. The file is
// written whole or not at all.
func Save(ctx context.Context, lg *zap.Logger, cfg clientv3.Config, path string) (Status, error) {
	if len(cfg.Endpoints) != 1 {
		return Status{}, fmt.Errorf("a snapshot is taken from one etcd member; got %d endpoints %v", len(cfg.Endpoints), cfg.Endpoints)
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = dialTimeout
	}
	if _, err := snapshot.NewV3(lg).Save(ctx, cfg, path); err != nil {
		return Status{}, fmt.Errorf("saving a snapshot of %s to %s: %w", cfg.Endpoints[0], path, err)
	}
	return Verify(lg, path)
}

// Verify checks a snapshot file: its trailing SHA-256 digest matches its
// data (the check restore makes) and its database is consistent (etcdutl
// snapshot status). It reads the file twice and changes nothing.
func Verify(lg *zap.Logger, path string) (Status, error) {
	digest, size, err := checkDigest(path)
	if err != nil {
		return Status{}, err
	}
	st, err := snapshot.NewV3(lg).Status(path)
	if err != nil {
		return Status{}, fmt.Errorf("checking the database in %s: %w", path, err)
	}
	return Status{Path: path, Revision: st.Revision, Keys: st.TotalKey, Size: size, SHA256: digest, EtcdVersion: st.Version}, nil
}

// checkDigest checks the SHA-256 digest etcd appends to the snapshot it
// streams against the bytes before it, and returns it with the file size.
func checkDigest(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = f.Close() }() // only read from
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	size := fi.Size()
	// etcd pads the database to whole 512-byte pages before the digest
	// (etcdutl's hasChecksum).
	if size < sha256.Size || size%512 != sha256.Size {
		return "", size, fmt.Errorf("%s (%d bytes) does not end with an etcd snapshot digest", path, size)
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, size-sha256.Size); err != nil {
		return "", size, fmt.Errorf("reading %s: %w", path, err)
	}
	want := make([]byte, sha256.Size)
	if _, err := io.ReadFull(f, want); err != nil {
		return "", size, fmt.Errorf("reading %s: %w", path, err)
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return "", size, errors.New(path + ": the data does not match the snapshot's SHA-256 digest (a truncated or corrupted file)")
	}
	return hex.EncodeToString(want), size, nil
}
