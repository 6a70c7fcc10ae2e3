# The supervisor of a kubelab node's daemons (containerd, kube-proxy, the
# kubelet) and its control, after systemd's Restart=always: node-init.sh
# sources this file and runs `supervise NAME LOG CMD...` in the background
# for each daemon; the docker backend runs `daemonctl ACTION NAME` in the
# node for kill|stop|start|restart|pause|resume worker-N/NAME.
#
# The control directory ($KUBELAB_DAEMONS, /run/kubelab/daemons) holds
# NAME.pid while the daemon runs and NAME.down while it is held down (after
# kill or stop). The supervisor starts the daemon again 1 s after it exited
# on its own (RestartSec), or within 0.2 s of start removing NAME.down.
# POSIX sh (dash): each supervise runs in a subshell of its own, so its
# variables are its own.

KUBELAB_DAEMONS=${KUBELAB_DAEMONS:-/run/kubelab/daemons}

# supervise NAME LOG CMD...: runs CMD with its output appended to LOG ("-":
# this shell's own stdout and stderr) and runs it again whenever it exits,
# except while NAME.down exists.
supervise() {
  set +e # a failed kill or mv must not end the supervisor (node-init.sh runs with -e)
  name=$1 out=$2 d=$KUBELAB_DAEMONS
  shift 2
  mkdir -p "$d"
  while :; do
    if [ -e "$d/$name.down" ]; then
      sleep 0.2
      continue
    fi
    if [ "$out" = - ]; then "$@" & else "$@" >> "$out" 2>&1 & fi
    pid=$!
    echo "$pid" > "$d/$name.pid.new" && mv "$d/$name.pid.new" "$d/$name.pid"
    # daemonctl marks a daemon down before it reads the pid file: a mark
    # made before the pid was written is seen here, and the daemon, only
    # just started, goes at once.
    if [ -e "$d/$name.down" ]; then kill -KILL "$pid" 2> /dev/null; fi
    status=0
    wait "$pid" || status=$?
    rm -f "$d/$name.pid"
    if [ -e "$d/$name.down" ]; then
      echo "kubelab-node: $name is down (exit status $status)"
    else
      echo "kubelab-node: $name exited (status $status); restarting in 1s"
      sleep 1
    fi
  done
}

# daemonctl ACTION NAME acts on a supervised daemon:
#   kill     hold it down, SIGKILL, return when it is gone
#   stop     hold it down, SIGTERM, return when it is gone (SIGKILL after 20 s)
#   start    release it, return when it runs again
#   restart  release it, SIGTERM; return when the supervisor started it again
#   pause    SIGSTOP; resume: SIGCONT
# A daemon that is down already stays down on kill and stop.
daemonctl() {
  action=$1 name=$2 d=$KUBELAB_DAEMONS
  case $action in
  kill)
    touch "$d/$name.down"
    _dsignal KILL || true
    _dawait 50 _dgone || _dfail "still running 5s after SIGKILL"
    _dawait 5 _dreaped || true
    ;;
  stop)
    touch "$d/$name.down"
    _dterm || true
    _dawait 200 _dgone || { _dsignal KILL; _dawait 50 _dgone; } || _dfail "still running 25s after SIGTERM"
    _dawait 5 _dreaped || true
    ;;
  start)
    rm -f "$d/$name.down"
    _dawait 100 _drunning || _dfail "not running 10s after start"
    ;;
  restart)
    rm -f "$d/$name.down"
    old=$(_dpid)
    if [ -n "$old" ]; then _dterm || true; fi
    _dawait 300 _drestarted || _dfail "not running again 30s after SIGTERM"
    ;;
  pause) _dsignal STOP || _dfail "not running" ;;
  resume) _dsignal CONT || _dfail "not running" ;;
  *) _dfail "unknown action $action: want kill, stop, start, restart, pause or resume" ;;
  esac
}

_dpid() { cat "$d/$name.pid" 2> /dev/null || true; }

# _dsignal SIG sends SIG to the daemon; false when it does not run.
_dsignal() {
  p=$(_dpid)
  [ -n "$p" ] && kill "-$1" "$p" 2> /dev/null
}

# _dterm asks the daemon to exit; a paused one must be resumed to do so.
_dterm() { _dsignal TERM && _dsignal CONT; }

_drunning() {
  p=$(_dpid)
  [ -n "$p" ] && kill -0 "$p" 2> /dev/null
}

# _dgone: the process is gone; _dreaped: its supervisor saw it go (at
# node shutdown the supervisors go first: then only _dgone holds).
_dgone() { ! _drunning; }
_dreaped() { [ ! -e "$d/$name.pid" ]; }

_drestarted() { _drunning && [ "$(_dpid)" != "$old" ]; }

# _dawait N CHECK runs CHECK every 0.1 s until it holds, at most N times.
_dawait() {
  i=0
  until $2; do
    i=$((i + 1))
    [ "$i" -ge "$1" ] && return 1
    sleep 0.1
  done
}

_dfail() {
  echo "kubelab-node: $action $name: $*" >&2
  exit 1
}
