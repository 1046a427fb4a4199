#!/bin/sh
# Builds target/java-consumer.jar (Jackson included): offline when the local Maven repository has
# everything, online otherwise (the first build downloads the plugins and Jackson from Maven Central).
set -e
cd "$(dirname "$0")"
mvn -q -B -o package "$@" 2>/dev/null || mvn -q -B package "$@"
echo "$(pwd)/target/java-consumer.jar"
