#!/usr/bin/env bash
# Builds the endpoint VM image (a Debian kernel and an initramfs) from Debian's
# archive only, into CACHE/images/<hash of every input>/, and prints that path.
# The same inputs give the same bytes; a second build with them is a cache hit.
#
#   build-image.sh --cache DIR --agent PATH [--tool PATH]... [--extra LIST]
#
# The image carries every executable of perftest, ibverbs-utils, rdmacm-utils,
# qperf and ucx-utils (with UCX's transport modules), and each --tool (FabricEmu's
# own programs for the guests, fabemu-allreduce), all with their ldd closure.
#
# LIST (optional, docs/endpoints.md): one host path per line, files or
# binaries (binaries bring their ldd closure), for scenario-specific tools.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache= agent= extra=
tools_extra=()
while (($#)); do
  case "$1" in
    --cache) cache=$2; shift 2 ;;
    --agent) agent=$2; shift 2 ;;
    --extra) extra=$2; shift 2 ;;
    --tool) tools_extra+=("$2"); shift 2 ;;
    *) echo "build-image.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
die() { echo "fabemu image: $*" >&2; exit 1; }
[[ -n $cache && -n $agent ]] || die "usage: build-image.sh --cache DIR --agent PATH [--tool PATH]... [--extra LIST]"
cache=$(realpath -m -- "$cache") # the download below runs in another folder
[[ -x $agent ]] || die "guest agent '$agent' is missing: build FabricEmu first"
[[ -z $extra || -r $extra ]] || die "extra list '$extra' cannot be read"
for t in "${tools_extra[@]}"; do
  [[ -x $t ]] || die "tool '$t' is missing: build FabricEmu first"
done
for tool in apt-get dpkg-deb dpkg-query depmod modinfo cpio gzip ldd make; do
  command -v "$tool" >/dev/null || die "'$tool' is not installed (scripts/install-deps installs it)"
done

# --- What goes in: versions of every package, and the recipe itself ---------
# The kernel is the one whose headers are installed (siw.ko is built against them):
# the linux-headers-amd64 metapackage names it, and dpkg answers in milliseconds.
kver=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null \
  | grep -o 'linux-headers-[0-9][^ ,]*-amd64' | head -1 | sed 's/^linux-headers-//')
[[ -n $kver ]] || die "linux-headers-amd64 is not installed (scripts/install-deps installs it)"
kpkg=linux-image-$kver
kpkg_version=$(dpkg-query -W -f='${Version}' "linux-headers-$kver" 2>/dev/null)
headers=/usr/src/linux-headers-$kver
[[ -n $kpkg_version && -d $headers ]] \
  || die "linux-headers-$kver is not installed (scripts/install-deps installs it)"
ksource=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | head -1)
[[ -n $ksource ]] || die "linux-source is not installed (scripts/install-deps installs it)"

# Every executable of these goes in (a user's ib_atomic_bw must not be "not found").
toolbox=(perftest ibverbs-utils rdmacm-utils qperf ucx-utils)
userspace=(libibverbs1 ibverbs-providers librdmacm1 "${toolbox[@]}" libucx0
  iproute2 ethtool busybox-static)
versions=$(dpkg-query -W -f='${Package}=${Version}\n' "${userspace[@]}" 2>/dev/null) \
  || die "missing user-space packages; need: ${userspace[*]} (scripts/install-deps)"
hash=$( { echo "$kpkg=$kpkg_version"; echo "$versions";
          dpkg-query -W -f='${Package}=${Version}\n' "linux-headers-$kver" linux-source 2>/dev/null || true
          sha256sum "$here/build-image.sh" "$here/init.sh" "$here/modules.txt" "$agent" \
            "${tools_extra[@]}" | cut -d' ' -f1
          if [[ -n $extra ]]; then
            cat "$extra"
            grep -v '^#' "$extra" | xargs -r sha256sum 2>/dev/null || true
          fi
        } | sha256sum | cut -c1-16)
out=$cache/images/$hash
if [[ -s $out/vmlinuz && -s $out/initramfs.cpio.gz ]]; then
  echo "$out"
  exit 0
fi
echo "fabemu image: building $hash (kernel $kver)" >&2
mkdir -p "$cache/debs" "$cache/siw"
work=$(mktemp -d "$cache/.build-XXXXXX")
trap 'rm -rf "$work"' EXIT

# --- The kernel: downloaded and extracted, never installed on the host ------
deb=$cache/debs/${kpkg}_${kpkg_version}_amd64.deb
if [[ ! -s $deb ]]; then
  (cd "$work" && apt-get download -q "$kpkg=$kpkg_version" >/dev/null 2>"$work/apt.err") \
    || die "cannot download $kpkg=$kpkg_version: $(tail -1 "$work/apt.err")"
  mv "$work"/${kpkg}_*.deb "$deb"
fi
dpkg-deb -x "$deb" "$work/kroot"
depmod -b "$work/kroot" "$kver"
moddir=$work/kroot/lib/modules/$kver

# --- siw.ko, built out of tree for that kernel (Debian's lacks CONFIG_RDMA_SIW)
siw=$cache/siw/v2-$kver-$(sha256sum "$ksource" | cut -c1-12)/siw.ko # v2: stripped
if [[ ! -s $siw ]]; then
  mkdir -p "$work/siw"
  tar -xJf "$ksource" -C "$work/siw" --wildcards '*/drivers/infiniband/sw/siw/*' \
    || die "drivers/infiniband/sw/siw is not in $ksource"
  src=$(dirname "$(find "$work/siw" -name siw_main.c | head -1)")
  make -s -C "$headers" M="$src" CONFIG_RDMA_SIW=m modules >"$work/siw.log" 2>&1 \
    || die "building siw.ko failed: $(tail -3 "$work/siw.log")"
  mkdir -p "$(dirname "$siw")"
  strip --strip-debug -o "$siw" "$src/siw.ko"
fi

# --- Staging: modules in load order -----------------------------------------
stage=$work/root
# Merged /usr, as Debian 12 has it, so every host path and symlink chain copied
# below (the ELF loader's included) resolves in the image as it does on the host.
mkdir -p "$stage"/usr/{bin,sbin,lib,lib64} "$stage"/{etc/fabemu,etc/libibverbs.d,proc,sys,dev,tmp,run}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$stage/$d"; done
mkdir -p "$stage/usr/lib/modules"
declare -A path_of seen
while IFS=: read -r rel _; do
  base=$(basename "$rel"); base=${base%%.ko*}
  path_of[${base//-/_}]=$rel
done < "$moddir/modules.dep"
order=()
visit() { # depth first: dependencies before the module
  local m=${1//-/_}
  [[ -n ${seen[$m]:-} ]] && return
  seen[$m]=1
  local rel=${path_of[$m]:-}
  [[ -n $rel ]] || die "module $m is not in $kpkg"
  local dep
  for dep in $(awk -F': ' -v r="$rel" '$1 == r {print $2}' "$moddir/modules.dep"); do
    dep=$(basename "$dep"); visit "${dep%%.ko*}"
  done
  order+=("$rel")
}
while read -r m; do
  case "$m" in ''|'#'*) continue ;; esac
  visit "$m"
done < "$here/modules.txt"
for d in $(modinfo -F depends "$siw" | tr , ' '); do visit "$d"; done
: > "$stage/etc/fabemu/modules.order"
for rel in "${order[@]}"; do
  name=$(basename "$rel"); name=${name%%.ko*}.ko
  case "$rel" in
    *.ko.xz) xz -dc "$moddir/$rel" > "$stage/lib/modules/$name" ;;
    *.ko.zst) zstd -qdc "$moddir/$rel" > "$stage/lib/modules/$name" ;;
    *) cp "$moddir/$rel" "$stage/lib/modules/$name" ;;
  esac
  echo "$name" >> "$stage/etc/fabemu/modules.order"
done
cp "$siw" "$stage/lib/modules/siw.ko"

# --- User space with its ldd closure ----------------------------------------
copy_file() { # a host path into the image at the same path (links kept as links)
  local f=$1
  [[ -e $stage$f ]] && return 0
  mkdir -p "$stage$(dirname "$f")"
  if [[ -L $f ]]; then
    cp -a "$f" "$stage$f"
    local target; target=$(readlink -f "$f")
    copy_file "$target"
  else
    cp "$f" "$stage$f"
  fi
}
copy_libs_of() { # the shared libraries a binary loads
  local lib
  for lib in $(ldd "$1" 2>/dev/null | awk '/=> \// {print $3} /^\t\/lib/ {print $1}'); do
    copy_file "$lib"
  done
}
copy_with_libs() {
  copy_file "$1"
  copy_libs_of "$1"
}
cp /bin/busybox "$stage/usr/bin/busybox"
for t in ip rdma ethtool; do
  p=$(command -v "$t") || die "'$t' is not installed (scripts/install-deps installs it)"
  copy_with_libs "$p"
done
for pkg in "${toolbox[@]}"; do
  while read -r p; do
    [[ $p == */bin/* && -f $p && -x $p ]] && copy_with_libs "$p"
  done < <(dpkg -L "$pkg")
done
# UCX loads its transports (ib, rdmacm, cma) at run time from its module folder.
ucxmods=$(dpkg -L libucx0 | grep '/ucx/libuct_.*\.so\.0$' || true)
[[ -n $ucxmods ]] || die "UCX's transport modules are missing (package libucx0)"
for p in $ucxmods; do copy_with_libs "$p"; done
for t in "${tools_extra[@]}"; do
  copy_libs_of "$t"
  cp "$t" "$stage/usr/bin/$(basename "$t")"
done
for p in /usr/lib/x86_64-linux-gnu/libibverbs/lib{rxe,siw}-rdmav*.so; do
  [[ -e $p ]] || die "the rxe/siw verbs providers are missing (package ibverbs-providers)"
  copy_with_libs "$p"
done
cp /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/siw.driver "$stage/etc/libibverbs.d/"
copy_with_libs "$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ {print $NF; exit}')" # rping's exit
if [[ -n $extra ]]; then
  while read -r p; do
    case "$p" in ''|'#'*) continue ;; esac
    [[ -e $p ]] || die "extra '$p' (from $extra) does not exist on this host"
    if [[ -d $p ]]; then
      while IFS= read -r -d '' f; do copy_with_libs "$f"; done < <(find "$p" -type f -print0)
    else
      copy_with_libs "$p"
    fi
  done < "$extra"
fi
cp "$agent" "$stage/usr/sbin/fabemu-agent"
cp "$here/init.sh" "$stage/init"
chmod 0755 "$stage/init" "$stage/usr/sbin/fabemu-agent"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$stage/etc/passwd"
printf '127.0.0.1 localhost\n' > "$stage/etc/hosts"

# --- Reproducible archive: sorted names, zero times, root-owned --------------
mkdir -p "$work/out"
cp "$work/kroot/boot/vmlinuz-$kver" "$work/out/vmlinuz"
find "$stage" -exec touch -h -d @0 {} +
(cd "$stage" && find . -print0 | LC_ALL=C sort -z \
  | cpio --null --create --format=newc --owner=0:0 --reproducible --quiet) \
  | gzip -9n > "$work/out/initramfs.cpio.gz"
printf '%s\n' "kernel=$kver" "$versions" > "$work/out/manifest.txt"
mkdir -p "$cache/images"
rm -rf "$out"
mv "$work/out" "$out"
echo "$out"
