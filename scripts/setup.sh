# Shared set-up for scripts/demo and scripts/test (sourced): Debian packages, configure, build.
# A second run is fast: nothing is reinstalled and the build is incremental.

ZB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ZB_BUILD="${ZB_BUILD:-$ZB_ROOT/build}"

ZB_PACKAGES=(cmake ninja-build g++ pkg-config
  libfmt-dev nlohmann-json3-dev libboost-dev libboost-program-options-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsimgrid-dev coinor-libcbc-dev libopenblas-dev libcsv-dev libnlopt-cxx-dev
  libopenmpi-dev openmpi-bin libsqlite3-dev
  qt6-base-dev qt6-svg-dev libgl1-mesa-dev
  python3-dev pybind11-dev python3-pytest python3-numpy)

# The Chrome DevTools trace engine (npm @paulirish/trace_engine), which ctest's
# zbsim_devtools_trace_engine runs on real zbsim traces: installed when npm can fetch it, else that
# test skips (exit 77). Best effort: nothing here fails the build.
ZB_TRACE_ENGINE_VERSION=0.0.65
zb_trace_engine() {
  local dir="${ZB_TRACE_ENGINE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/zbsim/trace-engine}"
  local entry="$dir/node_modules/@paulirish/trace_engine/package.json"
  if [ ! -f "$entry" ]; then
    if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
      timeout 300 apt-get install -y -qq nodejs npm >/dev/null 2>&1 || true
    fi
    if command -v npm >/dev/null 2>&1; then
      timeout 300 npm install --prefix "$dir" --no-audit --no-fund --silent \
        "@paulirish/trace_engine@$ZB_TRACE_ENGINE_VERSION" >/dev/null 2>&1 || true
    fi
  fi
  if [ -f "$entry" ]; then
    export ZB_TRACE_ENGINE="$dir"
  else
    echo "zbsim: no DevTools trace engine (npm): zbsim_devtools_trace_engine will skip" >&2
  fi
}

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
