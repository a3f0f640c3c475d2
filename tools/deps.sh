#!/bin/sh
# Checks for what the build needs (a C compiler, make, libcjson-dev) and, on Debian or
# Ubuntu, installs what is missing (as root, or through sudo). Prints what to install
# otherwise. Quiet when everything is present.
missing=""
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
[ -f /usr/include/cjson/cJSON.h ] || missing="$missing libcjson-dev"
[ -z "$missing" ] && exit 0
echo "mugen: installing missing build dependencies:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
fi
if command -v apt-get >/dev/null 2>&1; then
    $SUDO apt-get update -qq >/dev/null 2>&1
    if DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null; then
        exit 0
    fi
fi
echo "mugen: could not install:$missing. Install them (Debian: apt-get install$missing) and retry." >&2
exit 1
