#!/usr/bin/env bash
# The Debian package, end to end, from a build tree.
#   test_package.sh package BUILD_DIR WORK_DIR VERSION CUDA_ON UI_DIR QT_QML_DIR
#     builds the .deb with CPack (DEB generator, stripped, gzip so it stays quick on 2 cores),
#     checks its file list (dpkg-deb -c) and control fields (dpkg-deb -f), unpacks it into
#     WORK_DIR/root (dpkg-deb -x, no root needed) and runs the installed day0-cli and day0 there,
#     with HOME and the XDG folders in WORK_DIR: they must find the demo model under the unpacked
#     share/day0, never in the source tree they were built from, and write only to XDG folders.
#   test_package.sh no-cuda BUILD_DIR WORK_DIR VERSION CUDA_ON
#     starts the unpacked binaries through the dynamic loader with its cache ignored, so only the
#     Debian system library folders are searched (the CUDA toolkit's folder is not): this is a
#     machine with the package's Depends installed and no CUDA toolkit.
set -euo pipefail

mode=$1 build=$2 work=$3 version=$4 cuda=$5 ui=${6:-} qml_dir=${7:-}
root=$work/root
prefix=$root/usr
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
check() { echo "ok: $*"; }

unset LD_LIBRARY_PATH

if [[ $mode == package ]]; then
  rm -rf "$work"
  mkdir -p "$work/pkg" "$root" "$work/home" "$work/xdg/data" "$work/xdg/config" "$work/xdg/cache" "$work/xdg/run"
  chmod 700 "$work/xdg/run"
  start=$SECONDS
  cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/pkg" -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip \
    >"$work/cpack.log" 2>&1 || {
    cat "$work/cpack.log" >&2
    fail "cpack could not build the package"
  }
  debs=("$work"/pkg/*.deb)
  [[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "expected one .deb in $work/pkg, found: ${debs[*]}"
  deb=${debs[0]}
  rm -rf "$work/pkg/_CPack_Packages" # CPack's staging copy of the unstripped binaries
  check "built $(basename "$deb") ($(du -h "$deb" | cut -f1)) in $((SECONDS - start)) s"

  # Control fields.
  arch=$(dpkg --print-architecture)
  [[ $(dpkg-deb -f "$deb" Package) == day0 ]] || fail "Package is '$(dpkg-deb -f "$deb" Package)', not day0"
  [[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "Version '$(dpkg-deb -f "$deb" Version)' != $version"
  [[ $(dpkg-deb -f "$deb" Architecture) == "$arch" ]] || fail "Architecture is not $arch"
  [[ $(dpkg-deb -f "$deb" Maintainer) == *"<"*"@"*">" ]] || fail "Maintainer has no e-mail address"
  [[ -n $(dpkg-deb -f "$deb" Description) ]] || fail "no Description"
  depends=$(dpkg-deb -f "$deb" Depends)
  recommends=$(dpkg-deb -f "$deb" Recommends)
  echo "Depends: $depends"
  echo "Recommends: $recommends"
  has_dep() { [[ ", $depends," == *", $1"[\ ,]* || ", $depends," == *"| $1"[\ ,]* ]]; }
  # QML modules and the SVG plugin are loaded by Qt at run time, invisible to dpkg-shlibdeps.
  for pkg in qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts \
    qml6-module-qtquick-dialogs libqt6svg6 libqt6gui6; do
    has_dep "$pkg" || fail "Depends lacks $pkg"
  done
  # Each dependency names a real package: the binaries run on this machine, so one of each
  # alternative is installed here.
  provided=$(dpkg-query -W -f='${Provides}\n' '*' 2>/dev/null | tr ',' '\n' | awk '{print $1}' | sort -u)
  while read -r alternatives; do
    ok=0
    for name in $(sed 's/([^)]*)//g; s/|/ /g' <<<"$alternatives"); do
      if [[ $(dpkg-query -W -f='${Status}' "$name" 2>/dev/null) == "install ok installed" ]]; then
        ok=1
      elif grep -qx -- "$name" <<<"$provided"; then
        ok=1 # a virtual package (libspdlog1.10-fmt9)
      fi
    done
    ((ok)) || fail "no installed package satisfies the dependency '$alternatives'"
  done < <(tr ',' '\n' <<<"$depends" | sed 's/^ *//')
  [[ $depends != *cuda* && $depends != *cublas* && $depends != *nvidia* ]] ||
    fail "Depends names a CUDA package; the CUDA driver must only be recommended"
  if [[ $cuda == ON ]]; then
    [[ $recommends == *libcuda1* ]] || fail "Recommends lacks the CUDA driver library (libcuda1)"
  fi
  check "control fields"

  # File list.
  dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's#^\./#/#' >"$work/files.txt"
  for f in /usr/bin/day0 /usr/bin/day0-cli /usr/share/applications/day0.desktop \
    /usr/share/metainfo/io.day0.Day0.metainfo.xml /usr/share/icons/hicolor/scalable/apps/day0.svg \
    /usr/share/icons/hicolor/48x48/apps/day0.png /usr/share/icons/hicolor/256x256/apps/day0.png \
    /usr/share/day0/demo-model/day0-demo.json /usr/share/day0/demo-model/tokenizer.json \
    /usr/share/day0/demo-model/config.json /usr/share/day0/demo-model/model.safetensors \
    /usr/share/day0/demo-glm/day0-demo.json /usr/share/day0/demo-glm/model.safetensors; do
    grep -qx -- "$f" "$work/files.txt" || fail "the package lacks $f"
  done
  outside=$(grep -v '^/usr/' "$work/files.txt" | grep -vx '/' | grep -vx '/usr/' || true)
  [[ -z $outside ]] || fail "files outside /usr: $outside"
  ! grep -qE '/usr/(include|lib/cmake)|\.a$|/tests?/' "$work/files.txt" ||
    fail "development or test files in the package: $(grep -E '/usr/(include|lib/cmake)|\.a$|/tests?/' "$work/files.txt")"
  check "$(wc -l <"$work/files.txt") entries in the file list"

  dpkg-deb -x "$deb" "$root"
  # Stripped, and no build-tree library path baked in.
  for b in day0 day0-cli; do
    [[ $(readelf -S "$prefix/bin/$b") != *.debug_info* ]] || fail "$b is not stripped"
    [[ $(readelf -d "$prefix/bin/$b") != *RPATH* && $(readelf -d "$prefix/bin/$b") != *RUNPATH* ]] ||
      fail "$b keeps a library path: $(readelf -d "$prefix/bin/$b" | grep -E 'RPATH|RUNPATH')"
  done
  check "binaries stripped, no RPATH/RUNPATH ($(du -h "$prefix/bin/day0" | cut -f1) day0, $(du -h "$prefix/bin/day0-cli" | cut -f1) day0-cli)"

  # Every shared library the binaries need that a Debian package provides is in Depends, by the
  # package that owns it here (dpkg -S), whatever dpkg-shlibdeps decided.
  for b in day0 day0-cli; do
    while read -r lib path; do
      owner=""
      for p in "$path" "$(readlink -f "$path")" "${path#/usr}" "/usr${path}"; do
        owner=$(dpkg -S "$p" 2>/dev/null | head -n1 | cut -d: -f1) && [[ -n $owner ]] && break
      done
      if [[ -z $owner ]]; then
        echo "note: $b needs $lib ($path), which no Debian package provides"
        continue
      fi
      # A dependency may name the package or a virtual package it provides (libspdlog1.10-fmt9).
      provides=$(dpkg-query -W -f='${Provides}' "$owner" 2>/dev/null | tr ',' '\n' | awk '{print $1}')
      found=0
      for name in "$owner" $provides; do has_dep "$name" && found=1; done
      ((found)) || fail "$b needs $lib from $owner, which Depends lacks"
    done < <(ldd "$prefix/bin/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
      grep -f <(readelf -d "$prefix/bin/$b" | sed -n 's/.*Shared library: \[\(.*\)\]/^\1 /p'))
  done
  check "every Debian library the binaries link is a dependency"

  # Every QML module the UI imports is in Depends, by the package that owns its folder in Qt's
  # QML directory (Qt loads them at run time, so no tool derives them).
  while read -r module; do
    [[ $module == Day0.* ]] && continue # the app's own module (PathField imports it), built into day0
    dir=$qml_dir/${module//.//}
    [[ -d $dir ]] || fail "the UI imports $module, not found at $dir"
    owner=$(dpkg -S "$dir" 2>/dev/null | head -n1 | cut -d: -f1)
    [[ -n $owner ]] || fail "no Debian package owns $dir"
    has_dep "$owner" || fail "the UI imports $module from $owner, which Depends lacks"
  done < <(sed -n 's/^import \([A-Za-z][A-Za-z0-9.]*\).*/\1/p' "$ui"/*.qml | sort -u)
  check "every QML module the UI imports is a dependency"

  # And every module that Qt's own file and folder dialogs import (the QML Qt falls back to where
  # the desktop has no dialog; the app uses the Fusion style): Qt 6.4 crashes opening a file
  # dialog whose QML cannot load.
  impl=$qml_dir/QtQuick/Dialogs/quickimpl/qml
  [[ -f $impl/FileDialog.qml && -f $impl/+Fusion/FileDialog.qml ]] || fail "no Qt Quick Dialogs QML under $impl"
  while read -r module; do
    dir=$qml_dir/${module//.//}
    [[ -d $dir ]] || fail "Qt's dialogs import $module, not found at $dir"
    owner=$(dpkg -S "$dir" 2>/dev/null | head -n1 | cut -d: -f1)
    [[ -n $owner ]] || fail "no Debian package owns $dir"
    has_dep "$owner" || fail "Qt's file dialogs import $module from $owner, which Depends lacks"
  done < <(sed -n 's/^import \([A-Za-z][A-Za-z0-9.]*\).*/\1/p' "$impl"/{File,Folder}Dialog*.qml \
    "$impl"/FolderBreadcrumbBar.qml "$impl"/+Fusion/{File,Folder}*.qml | sort -u)
  check "every QML module of Qt's file and folder dialogs is a dependency"

  # The PNG icons: PNG signature, IHDR width and height as the folder names them, and more than
  # a blank image's few hundred bytes of pixels.
  for size in 48 256; do
    png=$prefix/share/icons/hicolor/${size}x${size}/apps/day0.png
    [[ $(od -An -tx1 -N8 "$png" | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "$png is not a PNG"
    read -r w h < <(od -An -tu1 -j16 -N8 "$png" | awk '{print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}')
    [[ $w == "$size" && $h == "$size" ]] || fail "$png is ${w}x${h}, not ${size}x${size}"
    (($(stat -c %s "$png") > size * 8)) || fail "$png looks blank ($(stat -c %s "$png") bytes)"
  done
  check "48x48 and 256x256 PNG icons"

  # The desktop entry and the metadata.
  desktop=$prefix/share/applications/day0.desktop
  grep -qx 'Exec=day0' "$desktop" || fail "the desktop entry does not start day0"
  grep -qx 'Icon=day0' "$desktop" || fail "the desktop entry's icon is not day0"
  grep -q '^Categories=.*;$' "$desktop" || fail "the desktop entry has no Categories list"
  grep -q '<launchable type="desktop-id">day0.desktop</launchable>' "$prefix/share/metainfo/io.day0.Day0.metainfo.xml" ||
    fail "the metainfo does not name the desktop entry"
  if command -v appstreamcli >/dev/null; then
    appstreamcli validate --no-net "$prefix/share/metainfo/io.day0.Day0.metainfo.xml" ||
      fail "appstreamcli rejects the metainfo"
    check "appstreamcli validates the metainfo"
  fi

  # The installed binaries, with a marker in the installed demo model: a copy taken from the
  # source tree would lack it.
  export HOME=$work/home XDG_DATA_HOME=$work/xdg/data XDG_CONFIG_HOME=$work/xdg/config
  export XDG_CACHE_HOME=$work/xdg/cache XDG_RUNTIME_DIR=$work/xdg/run QT_QPA_PLATFORM=offscreen
  demo=$(readlink -f "$prefix/share/day0/demo-model")
  echo "unpacked" >"$demo/installed-marker"

  out=$("$prefix/bin/day0-cli" --version) || fail "installed day0-cli --version exited $?"
  echo "$out"
  [[ $(head -n1 <<<"$out") == "day0-cli $version "* ]] || fail "day0-cli --version does not print version $version"
  grep -q '^  gpu: ' <<<"$out" || fail "day0-cli --version names no GPU state"

  out=$("$prefix/bin/day0-cli" make-demo-model "$work/demo-copy") || fail "installed make-demo-model exited $?"
  echo "$out"
  [[ $out == *"copied from $demo"* ]] || fail "make-demo-model did not copy from the installed $demo"
  [[ -f $work/demo-copy/installed-marker && -f $work/demo-copy/day0-demo.json ]] ||
    fail "make-demo-model did not copy the installed demo model"
  # A fresh user has no history yet: the CLI names where it looked.
  out=$("$prefix/bin/day0-cli" history list 2>&1) || fail "installed day0-cli history list exited $?"
  [[ -f $XDG_DATA_HOME/day0/history.db || $out == *"$XDG_DATA_HOME/day0/history.db"* ]] ||
    fail "the history is not under \$XDG_DATA_HOME/day0: $out"
  check "day0-cli runs from the installed location"

  # Without a display the app points at the day0-cli installed beside it.
  out=$(env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$prefix/bin/day0" 2>&1) &&
    fail "installed day0 without a display exited 0"
  [[ $out == *"$(readlink -f "$prefix/bin")/day0-cli --help"* ]] ||
    fail "without a display, day0 does not name the installed day0-cli: $out"

  out=$("$prefix/bin/day0" --version) || fail "installed day0 --version exited $?"
  [[ $(head -n1 <<<"$out") == "day0 $version "* ]] || fail "day0 --version does not print version $version"
  start=$SECONDS
  out=$(timeout 150 "$prefix/bin/day0" --selftest 2>"$work/selftest.err") || {
    echo "$out"
    cat "$work/selftest.err" >&2
    fail "installed day0 --selftest failed"
  }
  echo "$out"
  grep -q '^day0 --selftest: ok' <<<"$out" || fail "day0 --selftest did not report ok"
  grep -q "loaded from $demo on " <<<"$out" || fail "day0 --selftest did not open the installed demo model $demo"
  check "day0 --selftest passes from the installed files in $((SECONDS - start)) s"

  leaked=$(find "$HOME" -mindepth 1 | head -n5)
  [[ -z $leaked ]] || fail "files written to \$HOME outside the XDG folders: $leaked"
  [[ -f $XDG_DATA_HOME/day0/logs/day0.log ]] || fail "no log under \$XDG_DATA_HOME/day0/logs"
  check "user data only under the XDG folders"
  exit 0
fi

if [[ $mode == no-cuda ]]; then
  [[ -x $prefix/bin/day0-cli ]] || fail "no unpacked package in $root (installer_package sets it up)"
  loader=$(readelf -l "$prefix/bin/day0-cli" | sed -n 's/.*interpreter: \(.*\)]/\1/p')
  [[ -x $loader ]] || fail "cannot find the dynamic loader"
  cuda_needed=$(readelf -d "$prefix/bin/day0" "$prefix/bin/day0-cli" |
    sed -n 's/.*Shared library: \[\(lib\(cuda\|cudart\|cublas\|cublasLt\|cufft\|curand\|cusparse\|cusolver\|cudnn\|nccl\|nvrtc\|nvJitLink\)\.so[^]]*\)\]/\1/p' |
    sort -u | tr '\n' ' ')
  # Where the toolkit's libraries sit in a system folder the loader would still find them, so the
  # load-time link itself is checked too.
  [[ -z $cuda_needed ]] || fail "the binaries need CUDA toolkit libraries at load time: $cuda_needed
(no Debian package the package could depend on provides them: open them at run time with dlopen)"
  for b in day0-cli day0; do
    # --inhibit-cache: only the loader's built-in system folders, not /etc/ld.so.conf.d entries
    # such as the CUDA toolkit's.
    out=$("$loader" --inhibit-cache "$prefix/bin/$b" --version 2>&1) ||
      fail "$b does not start without the CUDA toolkit's libraries:
$out"
    echo "$out"
    [[ $(head -n1 <<<"$out") == "$b $version "* ]] || fail "$b --version does not print version $version"
    gpu=$(grep '^  gpu: ' <<<"$out") || fail "$b --version names no GPU state"
    [[ $gpu != *"gpu: none"* || $gpu == *"using the CPU"* ]] || fail "without a GPU, $b does not say it uses the CPU"
  done
  check "day0 and day0-cli start without the CUDA toolkit"
  exit 0
fi

fail "unknown mode $mode (package or no-cuda)"
