package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// The image's file system and identity. /etc/passwd and /etc/group declare
// the user; the container runs as its numeric ids so that Kubernetes'
// runAsNonRoot can check them without reading /etc/passwd.
const (
	binPath  = "/usr/local/bin"
	caPath   = "/etc/ssl/certs/ca-certificates.crt"
	homePath = "/home/nonroot"
	userName = "nonroot"
	userID   = 65532
	// imageOS is the only OS the binaries are built for.
	imageOS = "linux"
)

// options are the inputs of one image build.
type options struct {
	binDir     string
	output     string
	name       string // the repository: the OCI layout's and the docker-archive's file name
	version    string // the tag
	revision   string
	source     string
	entrypoint string
	arch       string
	caFile     string
	created    time.Time
}

// result is what run built.
type result struct {
	ref          name.Tag
	digest       v1.Hash
	compressed   int64 // the manifest's layer sizes plus the config's
	uncompressed int64 // the layers' tar sizes
}

// run builds the image and writes it under o.output, replacing what an
// earlier run wrote there.
func run(o options) (result, error) {
	ref, err := name.NewTag(o.name + ":" + o.version)
	if err != nil {
		return result{}, fmt.Errorf("naming the image: %w", err)
	}
	img, err := build(o)
	if err != nil {
		return result{}, err
	}
	res := result{ref: ref}
	if res.digest, err = img.Digest(); err != nil {
		return result{}, fmt.Errorf("computing the image digest: %w", err)
	}
	if res.compressed, res.uncompressed, err = sizes(img); err != nil {
		return result{}, err
	}

	if err := os.MkdirAll(o.output, 0o755); err != nil {
		return result{}, err
	}
	dir := filepath.Join(o.output, o.name)
	if err := os.RemoveAll(dir); err != nil {
		return result{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return result{}, fmt.Errorf("writing the OCI layout %s: %w", dir, err)
	}
	if err := p.AppendImage(img,
		layout.WithPlatform(v1.Platform{OS: imageOS, Architecture: o.arch}),
		layout.WithAnnotations(map[string]string{
			specsv1.AnnotationRefName: ref.TagStr(),
		}),
	); err != nil {
		return result{}, fmt.Errorf("writing the image into the OCI layout %s: %w", dir, err)
	}
	archive := dir + ".tar"
	if err := tarball.WriteToFile(archive, ref, img); err != nil {
		return result{}, fmt.Errorf("writing the docker-archive %s: %w", archive, err)
	}
	return res, nil
}

// build assembles the image: the base layer, then the binaries, then the
// config. Nothing is read from a registry.
func build(o options) (v1.Image, error) {
	base, err := baseLayer(o.caFile, o.created)
	if err != nil {
		return nil, err
	}
	bins, names, err := binariesLayer(o.binDir, o.arch, o.created)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(names, o.entrypoint) {
		return nil, fmt.Errorf("the entrypoint %s is not in %s (it holds %v)", o.entrypoint, o.binDir, names)
	}

	created := v1.Time{Time: o.created}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "hack/image: users, /tmp, CA certificates", Comment: "base"}},
		mutate.Addendum{Layer: bins, History: v1.History{Created: created, CreatedBy: "hack/image: " + binPath, Comment: "binaries"}},
	)
	if err != nil {
		return nil, fmt.Errorf("adding the layers: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture = imageOS, o.arch
	uid := strconv.Itoa(userID)
	cf.Config = v1.Config{
		User:       uid + ":" + uid,
		Entrypoint: []string{binPath + "/" + o.entrypoint},
		WorkingDir: homePath,
		Env: []string{
			"PATH=" + binPath + ":/usr/bin:/bin",
			"SSL_CERT_FILE=" + caPath,
			"HOME=" + homePath,
		},
		Labels: map[string]string{
			specsv1.AnnotationTitle:    o.name,
			specsv1.AnnotationSource:   o.source,
			specsv1.AnnotationVersion:  o.version,
			specsv1.AnnotationRevision: o.revision,
			specsv1.AnnotationCreated:  o.created.Format(time.RFC3339),
		},
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("setting the image config: %w", err)
	}
	return img, nil
}

// sizes returns the image's size as pushed (the manifest's config and layer
// sizes) and unpacked (the layers' tar streams).
func sizes(img v1.Image) (compressed, uncompressed int64, err error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, 0, err
	}
	compressed = m.Config.Size
	for _, l := range m.Layers {
		compressed += l.Size
	}
	layers, err := img.Layers()
	if err != nil {
		return 0, 0, err
	}
	for _, l := range layers {
		n, err := uncompressedSize(l)
		if err != nil {
			return 0, 0, err
		}
		uncompressed += n
	}
	return compressed, uncompressed, nil
}
