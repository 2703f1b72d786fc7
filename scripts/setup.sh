#!/usr/bin/env bash
# Installs what building irisc needs on a Debian 12 (bookworm) machine: LLVM/MLIR 22 development
# packages, libclang for bindgen, and a C toolchain. Safe to run any number of times: it installs
# only what is missing and touches apt sources only when the configured ones lack LLVM 22.
#
# Run as root, or as a user with sudo.
set -euo pipefail

PACKAGES=(
    llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools libpolly-22-dev clang-22
    libzstd-dev libz3-dev libxml2-dev zlib1g-dev
    build-essential pkg-config
)
LLVM_KEY_URL="https://apt.llvm.org/llvm-snapshot.gpg.key"
LLVM_KEYRING="/etc/apt/keyrings/apt.llvm.org.asc"
LLVM_LIST="/etc/apt/sources.list.d/llvm-toolchain-22.list"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    SUDO=()
fi
as_root() {
    if [[ $(id -u) -ne 0 && ${#SUDO[@]} -eq 0 ]]; then
        die "installing needs root: run this script as root or install sudo"
    fi
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive "$@"
}

installed() { dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'; }
available() {
    local candidate
    candidate=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
    [[ -n $candidate && $candidate != "(none)" ]]
}
missing_packages() {
    local p
    for p in "${PACKAGES[@]}"; do
        installed "$p" || printf '%s\n' "$p"
    done
}

# Adds apt.llvm.org for this distribution (only called when the configured sources lack LLVM 22).
add_llvm_repository() {
    local codename
    codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
    [[ -n $codename ]] || die "cannot tell the distribution codename from /etc/os-release"
    say "LLVM 22 is not in the configured apt sources: adding apt.llvm.org (llvm-toolchain-$codename-22)"
    local fetch=()
    if command -v curl >/dev/null 2>&1; then
        fetch=(curl -fsSL "$LLVM_KEY_URL")
    elif command -v wget >/dev/null 2>&1; then
        fetch=(wget -qO- "$LLVM_KEY_URL")
    else
        as_root apt-get install -y ca-certificates curl
        fetch=(curl -fsSL "$LLVM_KEY_URL")
    fi
    as_root install -d -m 0755 /etc/apt/keyrings
    if [[ ! -s $LLVM_KEYRING ]]; then
        "${fetch[@]}" | as_root tee "$LLVM_KEYRING" >/dev/null
        say "saved the LLVM signing key to $LLVM_KEYRING"
    fi
    local line="deb [signed-by=$LLVM_KEYRING] http://apt.llvm.org/$codename/ llvm-toolchain-$codename-22 main"
    if ! grep -qsF "$line" "$LLVM_LIST"; then
        printf '%s\n' "$line" | as_root tee "$LLVM_LIST" >/dev/null
        say "wrote $LLVM_LIST"
    fi
    as_root apt-get update
}

mapfile -t missing < <(missing_packages)
if [[ ${#missing[@]} -eq 0 ]]; then
    say "all system packages already installed (${#PACKAGES[@]} checked)"
else
    say "missing: ${missing[*]}"
    as_root apt-get update
    if ! available llvm-22-dev || ! available libmlir-22-dev; then
        add_llvm_repository
        available llvm-22-dev || die "llvm-22-dev is still not available after adding apt.llvm.org"
    fi
    as_root apt-get install -y "${missing[@]}"
    mapfile -t still < <(missing_packages)
    [[ ${#still[@]} -eq 0 ]] || die "these packages did not install: ${still[*]}"
    say "installed: ${missing[*]}"
fi

LLVM_CONFIG=/usr/lib/llvm-22/bin/llvm-config
[[ -x $LLVM_CONFIG ]] || die "$LLVM_CONFIG is missing although llvm-22-dev is installed"
say "LLVM $("$LLVM_CONFIG" --version) at $("$LLVM_CONFIG" --prefix)"

# ptxas for `make test` on a machine without a GPU: the NVIDIA PTX assembler ships in the
# `nvidia-cuda-nvcc-cu12` wheel on the Python package registry. It goes into a project-local
# virtual environment (.venv-cuda, ignored by git), so nothing system-wide changes; the tests
# find it there (or through IRISC_PTXAS). No CUDA driver or GPU is involved.
NVCC_WHEEL="nvidia-cuda-nvcc-cu12==12.9.86"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv-cuda"
ptxas_path() { find "$VENV" -path '*nvidia/cuda_nvcc/bin/ptxas' -type f 2>/dev/null | head -n1; }
if [[ -n $(ptxas_path) ]] && "$(ptxas_path)" --version >/dev/null 2>&1; then
    say "ptxas already in $VENV"
else
    command -v python3 >/dev/null 2>&1 || as_root apt-get install -y python3 python3-venv
    if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
        as_root apt-get install -y python3-venv
        python3 -m venv "$VENV"
    fi
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$NVCC_WHEEL" \
        || die "cannot install $NVCC_WHEEL into $VENV (the PTX tests need its ptxas)"
    [[ -n $(ptxas_path) ]] || die "$NVCC_WHEEL installed but no ptxas was found in $VENV"
    say "installed ptxas ($NVCC_WHEEL) into $VENV"
fi
say "$("$(ptxas_path)" --version | tail -n1)"

if command -v cargo >/dev/null 2>&1; then
    say "$(cargo --version)"
elif [[ -x $HOME/.cargo/bin/cargo ]]; then
    say "cargo is installed at $HOME/.cargo/bin but not on PATH: run \`. \"\$HOME/.cargo/env\"\`"
else
    say "cargo not found. Install Rust (stable) with rustup:"
    say "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y"
    say "  . \"\$HOME/.cargo/env\""
    exit 1
fi
say "done"
