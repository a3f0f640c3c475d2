#!/bin/sh
# Checks (and on Debian installs) what the build needs: a C compiler, make, libcjson-dev.
missing=""
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
[ -f /usr/include/cjson/cJSON.h ] || missing="$missing libcjson-dev"
[ -z "$missing" ] && exit 0
echo "mugen: installing missing build dependencies:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO=sudo
if command -v apt-get >/dev/null 2>&1; then
    $SUDO apt-get update -qq >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null && exit 0
fi
echo "mugen: please install:$missing (Debian: apt-get install$missing)" >&2
exit 1
