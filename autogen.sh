#!/bin/sh
# Regenerates configure and Makefile.in (developers only; tarballs ship them).
set -e
cd "$(dirname "$0")"
autoreconf -fi
