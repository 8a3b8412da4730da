#!/usr/bin/env bash
# Proves that a new user's machine gets the whole product: builds a clean Debian bookworm root
# with mmdebstrap, clones the committed tree into it, and runs README command 1
# (scripts/setup.sh) and then command 2 (scripts/test.sh) inside, as root in a chroot. With
# --package it then builds the .deb (README "Install": cpack in build/), installs it with apt-get
# in a second, bare root (a lab machine: apt must bring every dependency it declares) and starts the
# installed window (offscreen, a screenshot) and CLI there.
# That user has no GPU and no CUDA toolkit; --with-cuda also binds this machine's
# /usr/local/cuda into the root (kernels compile and link, nothing runs them).
#
# Why: a package installed by hand on a development machine hides a missing install step (the
# shipped build once lost OpenCV on every new machine while CI stayed green). Only what
# scripts/install-deps.sh installs is in the root.
#
#   scripts/fresh-machine-check.sh [--with-cuda] [--keep] [--package] [--package-only]
# --package-only: command 1 and the .deb steps, not command 2 (a quicker check of the package
# alone; CI runs both commands and the package).
# Logs: build/fresh-machine/{mmdebstrap,setup,test,package,installed}.log. Needs root (CI runs as root).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

with_cuda=0
keep=0
package=0
skip_tests=0
for arg in "$@"; do
  case "$arg" in
    --with-cuda) with_cuda=1 ;;
    --keep) keep=1 ;;
    --package) package=1 ;;
    --package-only) package=1; skip_tests=1 ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "fresh-machine-check: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "fresh-machine-check: $*"; }
[ "$(id -u)" -eq 0 ] || { say "needs root (mmdebstrap and chroot)" >&2; exit 1; }
if ! command -v mmdebstrap >/dev/null; then
  say "installing mmdebstrap"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null
fi
if [ "$with_cuda" -eq 1 ] && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  say "--with-cuda: no /usr/local/cuda/bin/nvcc on this machine" >&2
  exit 1
fi

logs="$repo/build/fresh-machine"
mkdir -p "$logs"
root="$(mktemp -d "${TMPDIR:-/var/tmp}/convscope-fresh.XXXXXX")"
mounts=()
labs=()
cleanup() {
  local status=$?
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R -l "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}" 2>/dev/null || true; done
  if [ "$keep" -eq 1 ]; then
    say "root kept at $root ${labs[*]}"
  else
    rm -rf --one-file-system "$root" "${labs[@]}"
  fi
  exit $status
}
trap cleanup EXIT
bind() { mkdir -p "$root$2"; mount --bind "$1" "$root$2"; mounts+=("$root$2"); }

# The same package sources as this machine (its mirror or snapshot), in deb822 or one-line form.
sources() {
  if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
    for f in /etc/apt/sources.list.d/*.sources; do cat "$f"; echo; done
  else
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | grep -E '^deb ' || true
  fi
}

started=$SECONDS
say "making a clean Debian bookworm root in $root"
# git to clone the project, ca-certificates for apt over https; nothing of the project's own.
sources | mmdebstrap --variant=apt --include=git,ca-certificates bookworm "$root" - >"$logs/mmdebstrap.log" 2>&1 ||
  { tail -20 "$logs/mmdebstrap.log"; say "mmdebstrap failed" >&2; exit 1; }
say "root ready in $((SECONDS - started)) s"

git clone -q --no-local "$repo" "$root/home/user/convscope"
say "cloned $(git -C "$root/home/user/convscope" log --oneline -1)"
cp /etc/resolv.conf "$root/etc/resolv.conf"
bind /proc /proc
bind /sys /sys
# A booted machine has its cgroup file systems under /sys (slurmd reads them: the Slurm test), with
# their sub-mounts (cgroup v1's controllers), seen from the root as a slave, so that nothing done
# there reaches the host's.
if mountpoint -q /sys/fs/cgroup; then
  mkdir -p "$root/sys/fs/cgroup"
  mount --rbind /sys/fs/cgroup "$root/sys/fs/cgroup"
  mount --make-rslave "$root/sys/fs/cgroup"
  mounts+=("$root/sys/fs/cgroup")
fi
bind /dev /dev
bind /dev/pts /dev/pts
path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [ "$with_cuda" -eq 1 ]; then
  bind "$(readlink -f /usr/local/cuda)" /usr/local/cuda
  path="/usr/local/cuda/bin:$path"
fi

# This machine's compiler cache, so that the root does not compile again what this machine has
# compiled from the same sources with the same Debian compilers (CI's time). It changes nothing
# the check proves: a header or library missing in the root still fails its build (ccache runs
# the root's own preprocessor on a miss, and every program is linked there).
cache_env=()
if command -v ccache >/dev/null && cache_dir="$(ccache -k cache_dir 2>/dev/null)" && [ -d "$cache_dir" ]; then
  bind "$cache_dir" /var/cache/convscope-ccache
  cache_env=(CCACHE_DIR=/var/cache/convscope-ccache "CCACHE_MAXSIZE=$(ccache -k max_size)")
  say "compiling through this machine's ccache ($cache_dir)"
fi

inside() {
  chroot "$root" /usr/bin/env -i HOME=/root PATH="$path" LANG=C.UTF-8 TERM=dumb CI="${CI:-}" "${cache_env[@]}" \
    bash -c "cd /home/user/convscope && $1"
}

step() {  # name, command: run inside, log to a file, show the log's end on failure
  local name=$1 command=$2 t0=$SECONDS
  say "$name: $command (log: $logs/$name.log)"
  if inside "$command" </dev/null >"$logs/$name.log" 2>&1; then
    say "$command passed in $((SECONDS - t0)) s"
  else
    # What each failing test said (the log's tail has only ctest's summary of them).
    grep -n -B3 -A25 -E '\*\*\*(Failed|Exception|Timeout)|Failure$|ERROR: [A-Za-z]+Sanitizer|runtime error:' \
      "$logs/$name.log" | head -200 || true
    tail -60 "$logs/$name.log"
    say "$command FAILED in the clean root after $((SECONDS - t0)) s" >&2
    exit 1
  fi
}

step setup scripts/setup.sh
grep -E "^-- ConvScope:" "$logs/setup.log" || true
if [ "$skip_tests" -eq 1 ]; then
  say "README command 2 (scripts/test.sh) not run: --package-only"
else
  step test scripts/test.sh
  grep -E "tests passed|tests failed" "$logs/test.log" || true
  say "both README commands passed in a clean Debian root ($((SECONDS - started)) s in all)"
fi

# The package, as README's "Install" builds it, installed the way a user installs a .deb: apt-get
# must find every dependency it declares in the clean root's package sources (--package; CI asks).
if [ "$package" -eq 0 ]; then
  say "the .deb steps were not asked for (--package)"
  exit 0
fi
step package "cd build && cpack -G DEB && dpkg-deb --info convscope_*.deb"
grep -E "^ (Package|Version|Depends):" "$logs/package.log" || true
# A lab machine: a second clean root with nothing but apt, where the .deb alone must bring every
# library it needs (a root that built it has them all already, and would hide a missing one).
lab="$(mktemp -d "${TMPDIR:-/var/tmp}/convscope-lab.XXXXXX")"
labs+=("$lab")
t0=$SECONDS
sources | mmdebstrap --variant=apt --include=ca-certificates bookworm "$lab" - >"$logs/lab-mmdebstrap.log" 2>&1 ||
  { tail -20 "$logs/lab-mmdebstrap.log"; say "mmdebstrap of the lab root failed" >&2; exit 1; }
cp /etc/resolv.conf "$lab/etc/resolv.conf"
for m in /proc /sys /dev /dev/pts; do mkdir -p "$lab$m"; mount --bind "$m" "$lab$m"; mounts+=("$lab$m"); done
cp "$root"/home/user/convscope/build/convscope_*.deb "$lab/tmp/"
say "a bare lab root ready in $((SECONDS - t0)) s"
lab_step() {  # name, command: run in the lab root, log to a file, show the log's end on failure
  local name=$1 command=$2 t0=$SECONDS
  say "$name (lab root): $command (log: $logs/$name.log)"
  if chroot "$lab" /usr/bin/env -i HOME=/root PATH="$path" LANG=C.UTF-8 TERM=dumb bash -c "$command" \
    </dev/null >"$logs/$name.log" 2>&1; then
    say "$name passed in $((SECONDS - t0)) s"
  else
    tail -60 "$logs/$name.log"
    say "$name FAILED in the lab root after $((SECONDS - t0)) s" >&2
    exit 1
  fi
}
lab_step install "cd /tmp && apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./convscope_*.deb"
grep -E "newly installed" "$logs/install.log" || true
# The installed programs run from /usr/bin with no source tree anywhere: the CLI must name the
# installed model, the window start and draw (offscreen), the menu entry and icon be in place.
lab_step installed "cd / && set -e
    convscope-cli --version
    convscope-cli info | tee /tmp/installed-info.txt
    grep -q '(/usr/share/convscope/models/course-high.onnx)' /tmp/installed-info.txt
    convscope --version
    QT_QPA_PLATFORM=offscreen convscope --screenshot /tmp/installed-window.png --index 0 --tab explore
    test -s /tmp/installed-window.png
    test -f /usr/share/applications/convscope.desktop
    test -f /usr/share/icons/hicolor/scalable/apps/convscope.svg"
cp "$lab/tmp/installed-window.png" "$logs/installed-window.png"
say "the .deb installed with its dependencies and its programs started; look at $logs/installed-window.png"
