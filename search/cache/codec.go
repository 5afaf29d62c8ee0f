package cache

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Objects are kept as the member served them, JSON-encoded without
// metadata.managedFields (field ownership is the member's business and is
// often larger than the object), with the cached-from-cluster annotation
// already set, and compressed with zstd. Objects of one kind are alike, so
// a store trains a zstd dictionary on the first page of its initial list:
// with it a running pod of 3.5 KB compresses to about 530 bytes.

// dictSamples is how many objects a dictionary is trained on, at least.
const (
	minDictSamples = 16
	maxDictSize    = 16 << 10
	windowSize     = 128 << 10
	// maxWindow bounds what a decoder accepts: only our own frames are read.
	maxWindow = 1 << 20
)

// codec compresses and decompresses the objects of one store.
type codec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// newCodec returns a codec using the dictionary trained on samples, or none
// when there are too few samples to train one.
func newCodec(samples [][]byte) (*codec, error) {
	// Objects are small: a small window keeps each encoder's and decoder's
	// buffers small (the defaults reserve megabytes per store). One
	// encoder (a store compresses in its reflector's goroutine only) at
	// the fastest level: with the dictionary it compresses the objects as
	// well as the default level does, and its tables are a sixth of the
	// size (TestCodecFixedCost: a store's codec takes under 1.5 MiB, where
	// two default-level encoders took 5.7 MiB).
	encOpts := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true), zstd.WithWindowSize(windowSize)}
	decOpts := []zstd.DOption{zstd.WithDecoderConcurrency(2), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxWindow)}
	if len(samples) >= minDictSamples {
		d, err := dict.BuildZstdDict(samples, dict.Options{MaxDictSize: maxDictSize, HashBytes: 6})
		if err == nil {
			encOpts = append(encOpts, zstd.WithEncoderDict(d))
			decOpts = append(decOpts, zstd.WithDecoderDicts(d))
		}
		// A dictionary that cannot be trained (samples too uniform or too
		// small) only costs compression ratio.
	}
	enc, err := zstd.NewWriter(nil, encOpts...)
	if err != nil {
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	dec, err := zstd.NewReader(nil, decOpts...)
	if err != nil {
		_ = enc.Close() // never used: nothing to flush
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	return &codec{enc: enc, dec: dec}, nil
}

// compress returns raw compressed, in a slice of exactly its size (the
// cache keeps it for as long as the object lives).
func (c *codec) compress(raw []byte) []byte {
	bufp := compressBuffers.Get().(*[]byte)
	out := c.enc.EncodeAll(raw, (*bufp)[:0])
	kept := append(make([]byte, 0, len(out)), out...)
	*bufp = out
	compressBuffers.Put(bufp)
	return kept
}

// compressBuffers are scratch buffers of compress.
var compressBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// decompress appends the object's JSON to dst.
func (c *codec) decompress(dst, data []byte) ([]byte, error) {
	out, err := c.dec.DecodeAll(data, dst)
	if err != nil {
		return dst, fmt.Errorf("decompressing a cached object: %w", err)
	}
	return out, nil
}

// compactJSON returns the JSON the cache keeps of obj: managedFields
// dropped and the cached-from-cluster annotation set. It changes obj.
func compactJSON(obj *unstructured.Unstructured, annotationKey, cluster string) ([]byte, error) {
	if md, ok := obj.Object["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
		ann, _ := md["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			md["annotations"] = ann
		}
		ann[annotationKey] = cluster
	}
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return raw, nil
}
