# Source this, then `pingpong_pair PROGRAM OPTIONS...` runs a Debian ibv_*_pingpong server and
# client on 127.0.0.1 over the software RDMA device.
# The programs take a fixed TCP port for their address exchange, so the port is chosen below the
# kernel's ephemeral range (a concurrent test's connection or listener can hold any ephemeral port)
# and not already listening; a pair that still fails (port taken between the check and the bind,
# a client that connected before the server was ready to exchange) is retried on a fresh port, up
# to three times, with every failed attempt's output shown. A real device bug fails all three.
pingpong_port() {
  ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  while :; do
    port=$(( 10000 + $(od -An -N2 -tu2 /dev/urandom) % (ephemeral_low - 10000) ))
    command -v ss >/dev/null 2>&1 || break
    [ -z "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] && break
  done
  echo "$port"
}

pingpong_attempt() {  # port program options...
  port=$1; program=$2; shift 2
  log=$(mktemp)
  timeout 60 "$program" -d softrdma0 -g 0 -p "$port" "$@" >"$log" 2>&1 &
  server=$!
  # the server listens once its QPs are up; retry the client until it connects
  tries=0
  until timeout 60 "$program" -d softrdma0 -g 0 -p "$port" "$@" 127.0.0.1; do
    tries=$((tries + 1))
    if [ $tries -ge 25 ] || ! kill -0 "$server" 2>/dev/null; then
      kill "$server" 2>/dev/null; wait "$server" 2>/dev/null
      echo "--- server log ($program, port $port):"; cat "$log"; rm -f "$log"
      return 1
    fi
    sleep 0.2
  done
  wait "$server"; rc=$?
  cat "$log"; rm -f "$log"
  return $rc
}

pingpong_pair() {  # program options...
  for attempt in 1 2 3; do
    pingpong_attempt "$(pingpong_port)" "$@" && return 0
    echo "pingpong_pair: $* failed (attempt $attempt of 3)"
  done
  return 1
}
