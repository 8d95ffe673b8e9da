#!/bin/sh
# bench/memory-cap.sh SIZE | off: cap the memory of the local PostgreSQL server (its processes and the page cache they
# fill) at SIZE bytes (a number with K, M or G), or lift the cap. For `pnpm bench --grown` with the data and memory
# scaled together: 1 million finished runs (16.4 GiB) under a 4.4 GiB cap stand for 5 million (78 GiB) on a 24 GiB
# machine, where the disk has no room for the 5 million themselves (docs/performance.md, "Five million finished runs, scaled down with the memory").
# Needs root and a cgroup memory controller (v1 at /sys/fs/cgroup/memory, or v2). Every process the postmaster forks
# after this inherits the cap; page cache already filled before it stays charged where it was (the bench makes fresh
# databases, so a row's pages are filled under the cap).
set -eu
size=${1:?usage: bench/memory-cap.sh SIZE|off}
case $size in
  off | [0-9]*[0-9] | [0-9]*[KMG]) ;;
  *) echo "memory-cap: SIZE is bytes, or a number with K, M or G (4400M), or off; got '$size'" >&2; exit 2 ;;
esac
if [ -d /sys/fs/cgroup/memory ]; then
  root=/sys/fs/cgroup/memory limit=memory.limit_in_bytes unlimited=-1
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  root=/sys/fs/cgroup limit=memory.max unlimited=max
else
  echo "memory-cap: no cgroup memory controller on this machine" >&2
  exit 2
fi
group=$root/holdfast-pg
pids=$(pgrep -u postgres -f postgres || true)
if [ "$size" = off ]; then
  [ -d "$group" ] || exit 0
  for p in $pids; do echo "$p" >"$root/cgroup.procs" 2>/dev/null || true; done
  echo "$unlimited" >"$group/$limit"
  rmdir "$group"
  echo "memory-cap: lifted"
  exit 0
fi
[ -n "$pids" ] || { echo "memory-cap: no PostgreSQL process is running; start it first" >&2; exit 2; }
mkdir -p "$group"
echo "$size" >"$group/$limit"
for p in $pids; do echo "$p" >"$group/cgroup.procs" 2>/dev/null || true; done
echo "memory-cap: PostgreSQL's $(echo "$pids" | wc -w) processes capped at $(cat "$group/$limit") bytes"
