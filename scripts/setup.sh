#!/usr/bin/env bash
# Installs everything ptec's build, tests and demo need, from Debian's archive.
# Idempotent: packages already present are skipped, so a second run takes a second.
set -euo pipefail

packages=(
  build-essential cmake make git
  gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi
  qemu-system-arm
  valgrind
  flatbuffers-compiler
  clang libclang-rt-14-dev llvm
  python3 python3-torch python3-torchvision python3-numpy python3-pytest python3-pytest-xdist python3-sklearn
  python3-pip python3-setuptools python3-wheel python3-yaml
  pkg-config
  chromium
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
echo "setup: done"
