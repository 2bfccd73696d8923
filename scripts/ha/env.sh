# Ports, names and directories of the HA testbed (sourced by up.sh, down.sh and the fault tests'
# environment). Nothing here touches the machine's own servers on 5432, 5672 and 6379.
HA_STATE="${HA_STATE:-/var/tmp/cms-ha}"
HA_RABBIT_PORTS=(5681 5682 5683)
HA_RABBIT_DIST_PORTS=(25681 25682 25683)
HA_RABBIT_NODES=(cms-ha-1@localhost cms-ha-2@localhost cms-ha-3@localhost)
HA_REDIS_PRIMARY_PORT=6391
HA_REDIS_REPLICA_PORT=6392
HA_SENTINEL_PORTS=(26391 26392 26393)
HA_SENTINEL_NAME=cms
HA_ETCD_CLIENT_PORT=2391
HA_ETCD_PEER_PORT=2392
HA_PG_PORTS=(5441 5442 5443)
HA_PATRONI_PORTS=(8441 8442 8443)
HA_HAPROXY_PORT=5440
HA_PG_BIN=/usr/lib/postgresql/15/bin

# What the services and tests use to reach the testbed.
HA_AMQP_URL="amqp://guest:guest@127.0.0.1:5681,amqp://guest:guest@127.0.0.1:5682,amqp://guest:guest@127.0.0.1:5683"
HA_DATABASE_URL="postgres://postgres@127.0.0.1:${HA_HAPROXY_PORT}/postgres"
HA_REDIS_SENTINELS="127.0.0.1:26391,127.0.0.1:26392,127.0.0.1:26393"

# The Erlang cookie and rabbitmqctl's HOME: our own, not the machine broker's.
rabbit_env() {
  local index=$1
  export HOME="$HA_STATE/rabbit-home"
  export RABBITMQ_NODENAME="${HA_RABBIT_NODES[$index]}"
  export RABBITMQ_NODE_PORT="${HA_RABBIT_PORTS[$index]}"
  export RABBITMQ_DIST_PORT="${HA_RABBIT_DIST_PORTS[$index]}"
  export RABBITMQ_MNESIA_BASE="$HA_STATE/rabbit-$index/mnesia"
  export RABBITMQ_LOG_BASE="$HA_STATE/rabbit-$index/log"
  export RABBITMQ_PID_FILE="$HA_STATE/pids/rabbit-$index"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$HA_STATE/rabbit-home/enabled_plugins"
  export RABBITMQ_CONFIG_FILE="$HA_STATE/rabbit-home/rabbitmq"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$HA_STATE/rabbit-home/advanced.config"
}
