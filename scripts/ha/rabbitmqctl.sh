#!/usr/bin/env bash
# rabbitmqctl against the testbed's first RabbitMQ node (its cookie, not the machine broker's).
source "$(dirname "$0")/env.sh"
rabbit_env 0
exec /usr/lib/rabbitmq/bin/rabbitmqctl "$@"
