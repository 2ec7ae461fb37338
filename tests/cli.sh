#!/bin/sh
# STUB, to be replaced.
exit 77
