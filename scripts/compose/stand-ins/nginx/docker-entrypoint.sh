#!/bin/sh
# The official image runs /docker-entrypoint.d/* first (templates, IPv6 tweaks); the compose file
# uses none of them, so the stand-in just runs the command.
set -e
exec "$@"
