package main

import (
	"archive/tar"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// entry is one file of a layer: its header, and its content either in
// memory (data) or streamed from a file of the build machine (src).
type entry struct {
	hdr  tar.Header
	data []byte
	src  string
}

// elfMachines maps the architectures the image can be built for to the ELF
// machine of their binaries.
var elfMachines = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
	"riscv64": elf.EM_RISCV,
}

// baseLayer holds what a static binary expects of a Linux file system: the
// user and group the image runs as, its home, a world-writable /tmp and the
// CA bundle of the build machine.
func baseLayer(caFile string, mtime time.Time) (v1.Layer, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("reading the CA bundle (install the Debian package ca-certificates, or pass --ca-file): %w", err)
	}
	if len(ca) == 0 {
		return nil, fmt.Errorf("the CA bundle %s is empty", caFile)
	}
	id := strconv.Itoa(userID)
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		userName + ":x:" + id + ":" + id + ":" + userName + ":" + homePath + ":/sbin/nologin\n"
	group := "root:x:0:\n" + userName + ":x:" + id + ":\n"

	entries := []entry{
		dirEntry("/etc", 0o755, 0),
		fileEntry("/etc/group", 0o644, []byte(group)),
		fileEntry("/etc/passwd", 0o644, []byte(passwd)),
		dirEntry("/etc/ssl", 0o755, 0),
		dirEntry(path.Dir(caPath), 0o755, 0),
		fileEntry(caPath, 0o644, ca),
		dirEntry("/home", 0o755, 0),
		dirEntry(homePath, 0o700, userID),
		dirEntry("/root", 0o700, 0),
		dirEntry("/tmp", 0o1777, 0),
	}
	return layer(entries, mtime)
}

// binariesLayer holds every file of dir under binPath: regular files must be
// static ELF executables for arch (the image has no libc and no dynamic
// loader), and symbolic links must name another file of dir. It returns the
// names it holds, sorted.
func binariesLayer(dir, arch string, mtime time.Time) (v1.Layer, []string, error) {
	machine, ok := elfMachines[arch]
	if !ok {
		return nil, nil, fmt.Errorf("unsupported architecture %q", arch)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the binaries: %w", err)
	}
	names := make([]string, 0, len(des))
	entries := []entry{
		dirEntry("/usr", 0o755, 0),
		dirEntry("/usr/local", 0o755, 0),
		dirEntry(binPath, 0o755, 0),
	}
	for _, de := range des { // os.ReadDir sorts by name
		src := filepath.Join(dir, de.Name())
		dst := path.Join(binPath, de.Name())
		switch de.Type() {
		case fs.ModeSymlink:
			target, err := os.Readlink(src)
			if err != nil {
				return nil, nil, err
			}
			if strings.Contains(target, "/") {
				return nil, nil, fmt.Errorf("%s links to %s, outside %s", src, target, dir)
			}
			entries = append(entries, entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: dst, Linkname: target, Mode: 0o777}})
		case 0:
			if err := checkStatic(src, machine); err != nil {
				return nil, nil, err
			}
			fi, err := de.Info()
			if err != nil {
				return nil, nil, err
			}
			entries = append(entries, entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: dst, Mode: 0o755, Size: fi.Size()}, src: src})
		default:
			return nil, nil, fmt.Errorf("%s is neither a file nor a symbolic link", src)
		}
		names = append(names, de.Name())
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("no binaries in %s", dir)
	}
	l, err := layer(entries, mtime)
	return l, names, err
}

// checkStatic fails unless the file is an ELF executable for machine that
// needs no dynamic loader (no PT_INTERP) and no shared library (no
// DT_NEEDED).
func checkStatic(file string, machine elf.Machine) error {
	f, err := elf.Open(file)
	if err != nil {
		return fmt.Errorf("%s is not an ELF binary: %w", file, err)
	}
	defer func() { _ = f.Close() }() // read-only
	if f.Machine != machine {
		return fmt.Errorf("%s is built for %s, not %s", file, f.Machine, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (it asks for a program interpreter); build it with CGO_ENABLED=0", file)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("reading the libraries %s needs: %w", file, err)
	}
	if len(libs) > 0 {
		return fmt.Errorf("%s needs the shared libraries %v; build it with CGO_ENABLED=0", file, libs)
	}
	return nil
}

func dirEntry(name string, mode int64, owner int) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: owner, Gid: owner}}
}

func fileEntry(name string, mode int64, data []byte) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data))}, data: data}
}

// layer returns a gzip-compressed OCI layer of the entries, sorted by name,
// every one stamped with mtime and its names left empty (the numeric ids
// are what counts), so that the same inputs give the same digest. The tar
// stream is produced again each time the layer is read, from the files on
// disk, rather than held in memory.
func layer(entries []entry, mtime time.Time) (v1.Layer, error) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].hdr.Name < entries[j].hdr.Name })
	for i := range entries {
		h := &entries[i].hdr
		h.Name = strings.TrimPrefix(h.Name, "/")
		h.ModTime = mtime
	}
	opener := func() (io.ReadCloser, error) {
		r, w := io.Pipe()
		go func() { w.CloseWithError(writeTar(w, entries)) }()
		return r, nil
	}
	return tarball.LayerFromOpener(opener,
		tarball.WithMediaType(types.OCILayer),
		tarball.WithCompressionLevel(gzip.BestCompression),
		tarball.WithCompressedCaching)
}

func writeTar(w io.Writer, entries []entry) error {
	tw := tar.NewWriter(w)
	for i := range entries {
		e := &entries[i]
		if err := tw.WriteHeader(&e.hdr); err != nil {
			return err
		}
		switch {
		case e.src != "":
			if err := copyFile(tw, e.src, e.hdr.Size); err != nil {
				return err
			}
		case e.data != nil:
			if _, err := tw.Write(e.data); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

// copyFile copies exactly size bytes of src, the size its header announced.
func copyFile(w io.Writer, src string, size int64) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only
	n, err := io.Copy(w, io.LimitReader(f, size))
	if err != nil {
		return err
	}
	if n != size {
		return errors.New(src + " changed while the image was built")
	}
	return nil
}

// uncompressedSize counts the bytes of the layer's tar stream.
func uncompressedSize(l v1.Layer) (int64, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return 0, err
	}
	defer func() { _ = rc.Close() }()
	return io.Copy(io.Discard, rc)
}
