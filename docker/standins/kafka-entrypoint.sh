#!/bin/bash
# Writes server.properties from the environment as the official apache/kafka image does
# (KAFKA_FOO_BAR=x -> foo.bar=x; a double underscore stands for an underscore, a triple one for a
# dash), formats the storage once with CLUSTER_ID, then runs the broker in the foreground.
set -euo pipefail
props=/opt/kafka/config/server.properties
: > "$props"
while IFS='=' read -r name value; do
  case "$name" in
    KAFKA_HEAP_OPTS | KAFKA_OPTS | KAFKA_JVM_PERFORMANCE_OPTS | KAFKA_LOG4J_OPTS) continue ;;
    KAFKA_*) ;;
    *) continue ;;
  esac
  key="${name#KAFKA_}"
  key="${key,,}"
  key="${key//___/-}"
  key="${key//__/@}"
  key="${key//_/.}"
  key="${key//@/_}"
  printf '%s=%s\n' "$key" "$value" >> "$props"
done < <(env)
grep -q '^log\.dirs=' "$props" || printf 'log.dirs=/var/lib/kafka/data\n' >> "$props"
first_dir="$(sed -n 's/^log\.dirs=\([^,]*\).*/\1/p' "$props")"
java_opts=(${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} -XX:+UseG1GC -Djava.awt.headless=true
  "-Dlog4j2.configurationFile=/opt/kafka/config/log4j2.properties" -cp '/opt/kafka/libs/*')
if [ ! -f "$first_dir/meta.properties" ]; then
  # The official image formats with this id when CLUSTER_ID is not set.
  CLUSTER_ID="${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}"
  java "${java_opts[@]}" kafka.tools.StorageTool format "--cluster-id=$CLUSTER_ID" "--config=$props"
fi
exec java "${java_opts[@]}" kafka.Kafka "$props"
