#!/bin/sh
# As the official redis entrypoint: options or a .conf file run redis-server, which runs as user
# redis. The official image's Redis is built with protected mode off by default, so that other
# containers can connect without a password; Debian's is not, so without a configuration file the
# stand-in turns it off on the command line (an explicit --protected-mode still wins).
set -e
if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ] && [ "$(id -u)" = 0 ]; then
  find . \! -user redis -exec chown redis '{}' +
  exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi
if [ "$1" = redis-server ]; then
  case " $* " in
    *.conf\ * | *' --protected-mode '*) ;;
    *) set -- "$@" --protected-mode no ;;
  esac
fi
um="$(umask)"
if [ "$um" = 0022 ]; then umask 0077; fi
exec "$@"
