#!/usr/bin/env bash
# Installs everything Day0 needs to build and test on Debian 12, from Debian's own packages.
# Idempotent: packages already present are skipped and nothing is installed twice.
# Runs apt as root, or through sudo; when neither is possible it prints what is missing
# and the command that would install it, and exits non-zero.
#
# The CUDA 13.0 toolkit (nvcc, cuBLAS/cuBLASLt, NCCL) is not a Debian package: it is found in
# /usr/local/cuda when present, and Day0 builds without it (-DDAY0_CUDA=OFF) when absent.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config git ca-certificates clang-format
  # Qt 6: base (Core, Gui, Widgets-free Quick stack, Test, Sql-free), QML, Quick Controls
  qt6-base-dev qt6-declarative-dev libgl-dev
  # What the app loads at run time: its QML modules, those of Qt's own file and folder dialogs
  # (used where the desktop has none; they need Qt.labs.folderlistmodel) and the SVG plugin.
  # The same list as the package's Depends (installer/CMakeLists.txt); ctest checks they agree.
  qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts
  qml6-module-qtquick-window qml6-module-qtquick-templates qml6-module-qtqml-workerscript
  qml6-module-qtquick-dialogs qml6-module-qt-labs-folderlistmodel libqt6svg6
  # QML test support (tests only)
  qml6-module-qttest
  # engine and storage libraries
  libsqlite3-dev libspdlog-dev libfmt-dev libstb-dev nlohmann-json3-dev libpcre2-dev libicu-dev libssl-dev libpoppler-cpp-dev
  # the OpenAI-compatible server and the remote-engine client
  libcpp-httplib-dev
  # the Debian package's test: dpkg-deb and dpkg-shlibdeps come with build-essential; appstreamcli
  appstream
  # test_demo_models reads the demo models' training text (tools/demo_model/corpus.jsonl.xz)
  xz-utils
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} Debian packages are present."
else
  echo "install-deps: installing ${#missing[@]} package(s): ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  elif command -v sudo >/dev/null 2>&1 && [[ -t 0 ]]; then
    SUDO=(sudo)
  else
    echo "install-deps: cannot install as $(id -un): not root and sudo is unavailable." >&2
    echo "Missing packages: ${missing[*]}" >&2
    echo "Install them with:  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    echo "install-deps: apt-get install failed; refreshing the package lists and retrying." >&2
    "${SUDO[@]}" apt-get update
    if ! "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
      echo "install-deps: could not install: ${missing[*]}" >&2
      echo "Check the network and /etc/apt/sources.list, then run this script again." >&2
      exit 1
    fi
  fi
fi

cuda_root=${CUDA_HOME:-/usr/local/cuda}
if [[ -x "$cuda_root/bin/nvcc" ]]; then
  echo "install-deps: CUDA toolkit found at $cuda_root ($("$cuda_root/bin/nvcc" --version | tail -n 2 | head -n 1))."
else
  echo "install-deps: no CUDA toolkit at $cuda_root; Day0 will build for the CPU only." \
       "Install the CUDA 13.0 toolkit (with NCCL) for GPU support."
fi
