#!/bin/sh
# Generates ./configure from configure.ac and the Makefile.am fragments.
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf --install --force >/dev/null
