#!/bin/sh
# rabbitmq-server runs as user rabbitmq with its data in the (possibly fresh) volume, as in the
# official image. Debian's /usr/sbin wrappers would redirect its logs to files: run the real script.
set -e
if [ "$1" = rabbitmq-server ]; then
  shift
  set -- /usr/lib/rabbitmq/bin/rabbitmq-server "$@"
  if [ "$(id -u)" = 0 ]; then
    find /var/lib/rabbitmq \! -user rabbitmq -exec chown rabbitmq:rabbitmq '{}' +
    exec setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups "$@"
  fi
fi
exec "$@"
