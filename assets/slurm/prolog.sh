#!/bin/bash
# Slurm prolog: starts the job user's Salus service on this node unless one runs already,
# so a job from `salus submit --socket '/run/salus/%u/salus.sock'` finds it (docs/slurm.md).
#
# slurmd runs a prolog as root, with Slurm's variables and no PATH of its own. Install:
#   cp assets/slurm/prolog.sh /etc/slurm/prolog.d/salus.sh   # slurm.conf: Prolog=/etc/slurm/prolog.d/*
# Settings, from the environment or /etc/default/salus-slurm:
#   SALUS_COMMAND      how to start salus (default: salus from PATH)
#   SALUS_RUN_DIR      where each user's socket folder goes (default: /run/salus)
#   SALUS_SERVE_FLAGS  more flags for salus serve, e.g. "--memory 70GiB --policy SRTF"
#   SALUS_START_SECONDS  how long to wait for the service to listen (default: 30)
export PATH="${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}"
[ -r /etc/default/salus-slurm ] && . /etc/default/salus-slurm
run_dir="${SALUS_RUN_DIR:-/run/salus}"
user="$SLURM_JOB_USER"
dir="$run_dir/$user"
socket="$dir/salus.sock"
read -r -a salus <<< "${SALUS_COMMAND:-salus}"
read -r -a flags <<< "${SALUS_SERVE_FLAGS:-}"
as_user() { if [ "$(id -u)" = "$SLURM_JOB_UID" ]; then "$@"; else runuser -u "$user" -- "$@"; fi; }

install -d -m 0755 "$run_dir"
install -d -m 0700 -o "$SLURM_JOB_UID" "$dir"
# One prolog at a time per user and node: two jobs starting together start one service.
exec 9>"$dir/prolog.lock"
flock -w 120 9
# Already listening: a job of the same user is there, or an earlier prolog started it.
if as_user "${salus[@]}" jobs --socket "$socket" >/dev/null 2>&1; then exit 0; fi
rm -f "$socket"
# The service says SLURMD_NODENAME as its node; its pid goes beside the socket, for an epilog.
as_user env XDG_RUNTIME_DIR="$dir" SLURMD_NODENAME="$SLURMD_NODENAME" PATH="$PATH" \
  setsid bash -c 'echo $$ > "$0/service.pid"; exec "$@"' "$dir" "${salus[@]}" serve --socket "$socket" --log-file "$dir/service.log" "${flags[@]}" \
  </dev/null >>"$dir/service.out" 2>&1 9>&- &
for _ in $(seq $((${SALUS_START_SECONDS:-30} * 5))); do
  [ -S "$socket" ] && exit 0
  sleep 0.2
done
echo "salus prolog: salus serve did not start on $SLURMD_NODENAME in ${SALUS_START_SECONDS:-30} s (see $dir/service.log)" >&2
# Not a failure of the node (a failing prolog drains it): the job then fails with a clear message.
exit 0
