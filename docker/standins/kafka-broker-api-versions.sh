#!/bin/bash
# The stand-in's answer to the official image's kafka-broker-api-versions.sh, for health checks
# only: it succeeds when the --bootstrap-server address accepts a connection (Maven Central does
# not serve the kafka-tools jar for every broker release).
set -euo pipefail
server=localhost:9092
while [ $# -gt 0 ]; do
  case "$1" in
    --bootstrap-server) server="$2"; shift 2 ;;
    *) shift ;;
  esac
done
exec 3<>"/dev/tcp/${server%:*}/${server##*:}"
