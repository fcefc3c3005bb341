# Shared set-up for scripts/demo and scripts/test (sourced): Debian packages, configure, build.
# A second run is fast: nothing is reinstalled and the build is incremental.

ZB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ZB_BUILD="${ZB_BUILD:-$ZB_ROOT/build}"

ZB_PACKAGES=(cmake ninja-build g++ pkg-config
  libfmt-dev nlohmann-json3-dev libboost-dev libboost-program-options-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsimgrid-dev coinor-libcbc-dev libopenblas-dev
  libopenmpi-dev openmpi-bin
  qt6-base-dev qt6-svg-dev libgl1-mesa-dev
  python3-dev pybind11-dev python3-pytest python3-numpy)

zb_install_packages() {
  local missing=()
  for pkg in "${ZB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "zbsim: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "zbsim: missing Debian packages; install them with:" >&2
    echo "  sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
}

zb_configure() {
  if [ ! -f "$ZB_BUILD/build.ninja" ]; then
    cmake -S "$ZB_ROOT" -B "$ZB_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
  fi
}

zb_build() {
  cmake --build "$ZB_BUILD" -j "$(nproc)" "$@"
}
