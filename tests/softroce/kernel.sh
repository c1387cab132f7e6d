#!/bin/sh
# Fetches Debian's stock kernel for the Soft-RoCE guest and prepares what the guest needs of it.
#
#   kernel.sh CACHE_DIR        prints the prepared directory (CACHE_DIR/kernel-<version>) on stdout
#
# The package is the one linux-image-amd64 depends on right now (apt-cache), downloaded with
# `apt-get download` into CACHE_DIR and kept there: a later run reuses it without the network. When
# apt cannot resolve or download it, the newest package already in CACHE_DIR is used. The prepared
# directory holds vmlinuz, the modules the guest loads (dummy, crc32_generic, rdma_rxe, ib_uverbs,
# rdma_ucm and their dependencies, resolved by kmod's modprobe from the package's own module tree)
# and `load-order`, one module file a line in insmod order. Exit status: 0 ready; 77 no kernel package
# can be had (the reason on stderr); 1 anything else went wrong.
set -u
cache=${1:?usage: kernel.sh CACHE_DIR}
# crc32_generic: rdma_rxe asks the crypto API for "crc32", which a full system would autoload
want_modules="dummy crc32_generic rdma_rxe ib_uverbs rdma_ucm"
mkdir -p "$cache" || { echo "cannot create the cache directory $cache" >&2; exit 77; }
cd "$cache" || exit 1

# 1. The package: resolved from the meta package, downloaded unless cached.
deb=
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
      sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
if [ -n "$pkg" ]; then
  ver=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
  # apt-get download writes the epoch's colon as %3a
  want="${pkg}_$(printf '%s' "$ver" | sed 's/:/%3a/')_amd64.deb"
  if [ -n "$ver" ] && [ -s "$want" ]; then
    deb=$want
  elif [ -n "$ver" ]; then
    echo "softroce: downloading $pkg $ver into $cache" >&2
    tmp=$(mktemp -d "$cache/download.XXXXXX") || exit 1
    if (cd "$tmp" && timeout 600 apt-get download "$pkg=$ver" >/dev/null 2>"$tmp.err") &&
       [ -s "$tmp/$want" ]; then
      mv "$tmp/$want" "$want" && deb=$want
    else
      echo "softroce: apt-get download $pkg=$ver failed: $(tail -n 1 "$tmp.err" 2>/dev/null)" >&2
    fi
    rm -rf "$tmp" "$tmp.err"
  fi
fi
if [ -z "$deb" ]; then
  deb=$(ls -t linux-image-*-amd64_*_amd64.deb 2>/dev/null | head -n 1)
  if [ -z "$deb" ]; then
    if [ -z "$pkg" ]; then
      echo "apt does not know linux-image-amd64 (apt-get update?) and $cache holds no kernel package" >&2
    else
      echo "cannot download $pkg and $cache holds no kernel package" >&2
    fi
    exit 77
  fi
  echo "softroce: using the cached $deb" >&2
fi

# 2. The prepared directory, built once per package file.
base=${deb%.deb}
kdir="$cache/kernel-${base#linux-image-}"
if [ -f "$kdir/load-order" ] && [ -f "$kdir/vmlinuz" ] &&
   [ "$(cat "$kdir/wanted" 2>/dev/null)" = "$want_modules" ]; then
  echo "$kdir"
  exit 0
fi
command -v depmod >/dev/null 2>&1 && command -v modprobe >/dev/null 2>&1 ||
  PATH=$PATH:/sbin:/usr/sbin
command -v depmod >/dev/null 2>&1 || { echo "depmod not found (Debian: apt-get install kmod)" >&2; exit 77; }
x=$(mktemp -d "$cache/extract.XXXXXX") || exit 1
trap 'rm -rf "$x"' EXIT
# The whole module tree, so that depmod sees every symbol's provider (rdma_cm needs configfs).
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$x" --wildcards './boot/vmlinuz-*' './lib/modules/*' ||
  { echo "cannot unpack $deb" >&2; exit 1; }
kver=$(ls "$x/lib/modules" | head -n 1)
[ -n "$kver" ] && [ -f "$x/boot/vmlinuz-$kver" ] || { echo "$deb holds no kernel image" >&2; exit 1; }
depmod -b "$x" "$kver" || { echo "depmod failed on $deb" >&2; exit 1; }
# built under a private name and renamed, so that runs sharing the cache do not mix their files
new=$(mktemp -d "$kdir.new.XXXXXX") && chmod 755 "$new" && mkdir -p "$new/modules" || exit 1
trap 'rm -rf "$x" "$new"' EXIT
cp "$x/boot/vmlinuz-$kver" "$new/vmlinuz" || exit 1
echo "$kver" >"$new/version"
echo "$want_modules" >"$new/wanted"
: >"$new/load-order"
for m in $want_modules; do
  # --show-depends prints "insmod PATH [options]" in load order; options are the guest's business
  deps=$(modprobe -C /dev/null -d "$x" -S "$kver" --show-depends "$m") ||
    { echo "modprobe cannot resolve $m in $deb" >&2; exit 1; }
  for ko in $(printf '%s\n' "$deps" | sed -n 's/^insmod \([^ ]*\).*/\1/p'); do
    name=$(basename "$ko")
    grep -qx "$name" "$new/load-order" && continue
    cp "$ko" "$new/modules/$name" || exit 1
    echo "$name" >>"$new/load-order"
  done
done
if [ "$(cat "$kdir/wanted" 2>/dev/null)" != "$want_modules" ]; then
  rm -rf "$kdir" && mv "$new" "$kdir" || exit 1
fi
echo "$kdir"
