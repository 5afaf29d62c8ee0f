package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// The binaries the Makefile puts in the image, and the kubectl plugin's link.
var imageBinaries = []string{"flotilla-agent", "flotilla-apiserver", "flotillactl"}

const pluginLink = "kubectl-flotilla"

// testCA stands in for the build machine's CA bundle.
var testCA = []byte("-----BEGIN CERTIFICATE-----\nnot a real certificate\n-----END CERTIFICATE-----\n")

// tinyBinaries compiles, once per test binary, a program of a few lines
// twice: statically (what make image builds) and as a dynamically linked
// PIE (what the image must refuse). The real binaries take minutes.
var tinyBinaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "flotilla-image-test-")
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { println(\"flotilla\") }\n"), 0o644); err != nil {
		return "", err
	}
	for out, args := range map[string][]string{
		"static":  {"-trimpath", "-ldflags", "-s -w"},
		"dynamic": {"-buildmode=pie"},
	} {
		cmd := exec.Command("go", append(append([]string{"build", "-o", filepath.Join(dir, out)}, args...), src)...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOFLAGS=-buildvcs=false")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %w\n%s", out, err, b)
		}
	}
	return dir, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := tinyBinaries(); err == nil {
		_ = os.RemoveAll(dir) // a temporary directory
	}
	os.Exit(code)
}

// testOptions returns options over a bin dir holding the tiny static
// program under each binary's name, the plugin link, and a fake CA bundle.
func testOptions(t *testing.T) options {
	t.Helper()
	if runtime.GOOS != imageOS {
		t.Skipf("the image holds %s binaries; this test builds them natively", imageOS)
	}
	tiny, err := tinyBinaries()
	if err != nil {
		t.Fatal(err)
	}
	static, err := os.ReadFile(filepath.Join(tiny, "static"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range imageBinaries {
		if err := os.WriteFile(filepath.Join(bin, n), static, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("flotillactl", filepath.Join(bin, pluginLink)); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(tmp, "ca.crt")
	if err := os.WriteFile(ca, testCA, 0o644); err != nil {
		t.Fatal(err)
	}
	return options{
		binDir:     bin,
		output:     filepath.Join(tmp, "out"),
		name:       "flotilla",
		version:    "v0.1.0-test",
		revision:   "0123456789abcdef",
		source:     "https://github.com/flotilla-io/flotilla",
		entrypoint: "flotilla-apiserver",
		arch:       runtime.GOARCH,
		caFile:     ca,
		created:    time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC),
	}
}

// openLayout opens the OCI layout run wrote and returns its only image and
// that image's descriptor in the index.
func openLayout(t *testing.T, o options) (v1.Image, v1.Descriptor) {
	t.Helper()
	p, err := layout.FromPath(filepath.Join(o.output, o.name))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("the index lists %d manifests, want 1: %+v", len(im.Manifests), im.Manifests)
	}
	desc := im.Manifests[0]
	img, err := p.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img, desc
}

// file is one file of the image's flattened file system.
type file struct {
	hdr  tar.Header
	data []byte
}

func files(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	fs := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fs
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		fs["/"+strings.TrimSuffix(h.Name, "/")] = file{hdr: *h, data: data}
	}
}

// static says why an ELF image is not a static executable, or "".
func static(data []byte) string {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return "not ELF: " + err.Error()
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "has a PT_INTERP program header"
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		return fmt.Sprintf("needs shared libraries %v (%v)", libs, err)
	}
	return ""
}

func TestImageLayout(t *testing.T) {
	t.Parallel()
	o := testOptions(t)
	res, err := run(o)
	if err != nil {
		t.Fatal(err)
	}
	img, desc := openLayout(t, o)

	// What crane validate checks: the digests, diff ids and sizes agree with
	// the blobs, for the layout and for the docker-archive.
	if err := validate.Image(img); err != nil {
		t.Errorf("the layout's image is not valid: %v", err)
	}
	archived, err := tarball.ImageFromPath(filepath.Join(o.output, o.name+".tar"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(archived); err != nil {
		t.Errorf("the docker-archive's image is not valid: %v", err)
	}

	if desc.Digest != res.digest {
		t.Errorf("the layout's image is %s, run reported %s", desc.Digest, res.digest)
	}
	if got := desc.Annotations[specsv1.AnnotationRefName]; got != o.version {
		t.Errorf("ref.name annotation = %q, want %q", got, o.version)
	}
	if desc.Platform == nil || desc.Platform.OS != "linux" || desc.Platform.Architecture != runtime.GOARCH {
		t.Errorf("platform = %+v, want linux/%s", desc.Platform, runtime.GOARCH)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH || !cf.Created.Equal(o.created) {
		t.Errorf("config os/arch/created = %s/%s/%s, want linux/%s/%s", cf.OS, cf.Architecture, cf.Created, runtime.GOARCH, o.created)
	}
	wantConfig := v1.Config{
		User:       "65532:65532",
		Entrypoint: []string{"/usr/local/bin/flotilla-apiserver"},
		WorkingDir: "/home/nonroot",
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
			"HOME=/home/nonroot",
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "flotilla",
			"org.opencontainers.image.source":   "https://github.com/flotilla-io/flotilla",
			"org.opencontainers.image.version":  "v0.1.0-test",
			"org.opencontainers.image.revision": "0123456789abcdef",
			"org.opencontainers.image.created":  "2026-11-27T10:00:00Z",
		},
	}
	if diff := cmp.Diff(wantConfig, cf.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}

	fs := files(t, img)
	for _, n := range imageBinaries {
		f, ok := fs["/usr/local/bin/"+n]
		switch {
		case !ok:
			t.Errorf("%s is not in the image", n)
		case f.hdr.Typeflag != tar.TypeReg || f.hdr.Mode != 0o755 || f.hdr.Uid != 0:
			t.Errorf("%s: type %c mode %o uid %d, want a regular file, 0755, root", n, f.hdr.Typeflag, f.hdr.Mode, f.hdr.Uid)
		case static(f.data) != "":
			t.Errorf("%s is not static: %s", n, static(f.data))
		}
	}
	if f := fs["/usr/local/bin/"+pluginLink]; f.hdr.Typeflag != tar.TypeSymlink || f.hdr.Linkname != "flotillactl" {
		t.Errorf("%s: type %c link %q, want a symbolic link to flotillactl", pluginLink, f.hdr.Typeflag, f.hdr.Linkname)
	}
	if f := fs["/etc/ssl/certs/ca-certificates.crt"]; !bytes.Equal(f.data, testCA) || f.hdr.Mode != 0o644 {
		t.Errorf("the CA bundle: mode %o, %q; want 0644 and the --ca-file's content", f.hdr.Mode, f.data)
	}
	if f := fs["/tmp"]; f.hdr.Typeflag != tar.TypeDir || f.hdr.Mode != 0o1777 {
		t.Errorf("/tmp: type %c mode %o, want a directory with mode 1777", f.hdr.Typeflag, f.hdr.Mode)
	}
	if f := fs["/home/nonroot"]; f.hdr.Typeflag != tar.TypeDir || f.hdr.Uid != 65532 || f.hdr.Gid != 65532 {
		t.Errorf("/home/nonroot: type %c owner %d:%d, want a directory of 65532:65532", f.hdr.Typeflag, f.hdr.Uid, f.hdr.Gid)
	}
	if f := fs["/etc/passwd"]; !strings.Contains(string(f.data), "\nnonroot:x:65532:65532:nonroot:/home/nonroot:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", f.data)
	}
	if f := fs["/etc/group"]; !strings.Contains(string(f.data), "\nnonroot:x:65532:") {
		t.Errorf("/etc/group has no nonroot group 65532:\n%s", f.data)
	}
	for name, f := range fs {
		if !f.hdr.ModTime.Equal(o.created) {
			t.Errorf("%s: mtime %s, want %s", name, f.hdr.ModTime, o.created)
		}
	}

	// The docker-archive holds the same config under the tag.
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(filepath.Join(o.output, o.name+".tar")) })
	if err != nil {
		t.Fatal(err)
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	want := tarball.Manifest{{Config: cfgName.String(), RepoTags: []string{"flotilla:v0.1.0-test"}}}
	if diff := cmp.Diff(want, m, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Layers" }, cmp.Ignore())); diff != "" {
		t.Errorf("docker-archive manifest (-want +got):\n%s", diff)
	}
	if len(m) == 1 && len(m[0].Layers) != 2 {
		t.Errorf("docker-archive layers = %v, want the base and the binaries", m[0].Layers)
	}
}

func TestImageReproducible(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(o *options)
		same   bool
	}{
		{name: "same inputs give the same image", change: func(*options) {}, same: true},
		{name: "another time gives another image", change: func(o *options) { o.created = o.created.Add(time.Second) }},
		{name: "another revision gives another image", change: func(o *options) { o.revision = "fedcba9876543210" }},
	}
	first := testOptions(t)
	if _, err := run(first); err != nil {
		t.Fatal(err)
	}
	_, want := openLayout(t, first)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := testOptions(t)
			tc.change(&o)
			if _, err := run(o); err != nil {
				t.Fatal(err)
			}
			_, got := openLayout(t, o)
			if (got.Digest == want.Digest) != tc.same {
				t.Errorf("digest %s, first build %s; want equal: %t", got.Digest, want.Digest, tc.same)
			}
		})
	}
}

func TestImageRefuses(t *testing.T) {
	t.Parallel()
	otherArch := "arm64"
	if runtime.GOARCH == otherArch {
		otherArch = "amd64"
	}
	tests := []struct {
		name    string
		change  func(t *testing.T, o *options)
		wantErr string
	}{{
		name:    "no CA bundle",
		change:  func(t *testing.T, o *options) { o.caFile = filepath.Join(t.TempDir(), "missing.crt") },
		wantErr: "install the Debian package ca-certificates",
	}, {
		name: "a dynamically linked binary",
		change: func(t *testing.T, o *options) {
			tiny, _ := tinyBinaries() // testOptions checked the error
			dynamic, err := os.ReadFile(filepath.Join(tiny, "dynamic"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(o.binDir, "flotilla-agent"), dynamic, 0o755); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: "flotilla-agent is dynamically linked",
	}, {
		name: "a file that is not a binary",
		change: func(t *testing.T, o *options) {
			if err := os.WriteFile(filepath.Join(o.binDir, "README"), []byte("hello\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: "README is not an ELF binary",
	}, {
		name:    "binaries of another architecture",
		change:  func(_ *testing.T, o *options) { o.arch = otherArch },
		wantErr: "is built for",
	}, {
		name:    "an entrypoint that is not there",
		change:  func(_ *testing.T, o *options) { o.entrypoint = "flotilla-scheduler" },
		wantErr: "the entrypoint flotilla-scheduler is not in",
	}, {
		name: "a link out of the binaries",
		change: func(t *testing.T, o *options) {
			if err := os.Symlink("/bin/sh", filepath.Join(o.binDir, "sh")); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: "links to /bin/sh, outside",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := testOptions(t)
			tc.change(t, &o)
			_, err := run(o)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("run: %v, want an error containing %q", err, tc.wantErr)
			}
			if _, err := os.Stat(filepath.Join(o.output, o.name)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused build wrote the layout (stat: %v)", err)
			}
		})
	}
}

// TestImagePushedWithCrane: what `crane push` does with the layout and with
// the docker-archive (crane's own code, as a library), to a registry (the
// library's registry, in memory), gives back the same image.
func TestImagePushedWithCrane(t *testing.T) {
	t.Parallel()
	o := testOptions(t)
	res, err := run(o)
	if err != nil {
		t.Fatal(err)
	}
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")

	fromLayout, _ := openLayout(t, o)
	fromArchive, err := crane.Load(filepath.Join(o.output, o.name+".tar"))
	if err != nil {
		t.Fatal(err)
	}
	for name, img := range map[string]v1.Image{"layout": fromLayout, "docker-archive": fromArchive} {
		ref := host + "/flotilla/" + name + ":" + o.version
		if err := crane.Push(img, ref, crane.Insecure); err != nil {
			t.Fatalf("crane push of the %s: %v", name, err)
		}
		pulled, err := crane.Pull(ref, crane.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate.Image(pulled); err != nil {
			t.Errorf("the %s's image pulled back is not valid: %v", name, err)
		}
		digest, err := pulled.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if name == "layout" && digest != res.digest {
			t.Errorf("pulled %s, pushed %s", digest, res.digest)
		}
		cf, err := pulled.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 {
			t.Errorf("the %s's image pulled back has user %q entrypoint %v", name, cf.Config.User, cf.Config.Entrypoint)
		}
	}
}
